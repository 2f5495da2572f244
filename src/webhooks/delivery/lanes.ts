/**
 * How one consumer invocation spends a Worker's connections: at most ATTEMPTS_AT_ONCE attempts
 * under way, and one connection left for D1 and the queue (recording outcomes, sending retries),
 * so the platform never queues a connection of ours and every attempt's 15 s runs from its own
 * start. The subscriptions of a batch take turns, so one subscription's deliveries never fill the
 * lanes before another's first; and a lease holds as long as its delivery may wait for a lane.
 * Pure.
 */
import { SIMULTANEOUS_CONNECTIONS, WAIT_UNTIL_MS } from "../../lib/platform-limits";
import { ATTEMPT_TIMEOUT_MS, LEASE_MS } from "../wire/retry-schedule";
import { healthAt, SLOW_MS, type AdmissionState } from "./admission";
import { withinBytes } from "../../lib/within-bytes";
import { RUN_AT_MOST } from "../outbox/order";

export const ATTEMPTS_AT_ONCE = SIMULTANEOUS_CONNECTIONS - 1;

/**
 * The attempts run after the invocation has handed its batch back (waitUntil, with the
 * `queue_consumer_no_wait_for_wait_until` flag), which Cloudflare lets go on 30 s: so the queue's
 * next batches never wait on a receiver. To end within them, the subscriptions that answer quickly
 * go first, and those not known to (fewer answers than timeouts in their health window, none at
 * all, or an attempt in flight past SLOW_MS) get one wave of lanes an invocation,
 * UNPROVEN_AT_ONCE attempts, which end within one timeout after them; the rest of theirs is put
 * off a moment.
 */
export const UNPROVEN_AT_ONCE = ATTEMPTS_AT_ONCE;

/** Whether a subscription answers quickly now, from the state the admission rule reads. Pure. */
export function answersQuickly(state: Pick<AdmissionState, "timeouts" | "answers" | "since" | "oldestStart">, now: number): boolean {
  const { timeouts, answers } = healthAt(state, now);
  return answers > timeouts && (state.oldestStart === null || now - state.oldestStart <= SLOW_MS);
}

/**
 * The bytes of the bodies one consumer invocation leases at most (what its lease reads to make
 * them, and holds while it attempts them); one delivery alone however large. The rest of its batch
 * is put off unleased and comes back OVERFLOW_DELAY_MS later.
 */
export const LEASE_BODY_BYTES = 8_000_000;
export const OVERFLOW_DELAY_MS = 1_000;

/** The first of `rows` (in their order) whose bytes fit `budget.left`, always one while none is taken; takes them from the budget. Pure but for the budget. */
export function withinBodyBytes<T extends { bodyBytes: number }>(rows: readonly T[], budget: { left: number; taken: number }): { taken: T[]; over: T[] } {
  const n = withinBytes(
    rows.map((row) => row.bodyBytes),
    budget.left,
    budget.taken === 0,
  );
  const taken = rows.slice(0, n);
  budget.left -= taken.reduce((sum, row) => sum + row.bodyBytes, 0);
  budget.taken += n;
  return { taken, over: rows.slice(n) };
}

interface Queued {
  id: string;
  subscriptionId: string;
  createdAt: number;
}

/**
 * The order a batch's attempts start in: each subscription's deliveries oldest first (the log's
 * order), the subscriptions taking turns, the one with the oldest delivery first.
 */
export function startOrder<T extends Queued>(rows: readonly T[]): T[] {
  const oldestFirst = [...rows].sort((a, b) => a.createdAt - b.createdAt || a.id.localeCompare(b.id));
  const turns = new Map<string, T[]>();
  for (const row of oldestFirst) {
    const list = turns.get(row.subscriptionId);
    if (list) list.push(row);
    else turns.set(row.subscriptionId, [row]);
  }
  const order: T[] = [];
  for (let round = 0; order.length < oldestFirst.length; round++) {
    for (const list of turns.values()) if (round < list.length) order.push(list[round]!);
  }
  return order;
}

/**
 * How long the lease of the attempt at `position` in the invocation's start order holds: one
 * attempt's lease, plus a full timeout for every wave of lanes ahead of it (each attempt in a
 * lane ends within ATTEMPT_TIMEOUT_MS), so a lease never lapses while its attempt waits.
 */
export function leaseMsAt(position: number): number {
  return LEASE_MS + Math.floor(position / ATTEMPTS_AT_ONCE) * ATTEMPT_TIMEOUT_MS;
}

/** What recording an attempt and handing its retries to the queue may take, at most, after the attempt ends. */
export const RECORD_MS = 5_000;

/**
 * Whether an attempt started at `now` by the invocation that started at `startedAt` still ends,
 * and is recorded, within waitUntil's 30 s: a chained delivery starts only then, and so does
 * each delivery of a run after the first. Pure.
 */
export function startsInTime(startedAt: number, now: number): boolean {
  return now + ATTEMPT_TIMEOUT_MS + RECORD_MS <= startedAt + WAIT_UNTIL_MS;
}

/** The bytes each delivery of `runs` runs may read of its body, from the `bytes` they share: an even part for each of a run's RUN_AT_MOST. Pure. */
export function runBodyBytes(bytes: number, runs: number): number {
  return runs > 0 && bytes > 0 ? Math.floor(bytes / (runs * RUN_AT_MOST)) : 0;
}

/**
 * The lanes an invocation gives, when it records attempts at `now`, to the next deliveries of the
 * ordered payments they end (record.ts): the lanes free now (none are queued while one is free),
 * while an attempt started now still ends, and is recorded, within the 30 s after the invocation
 * started at `startedAt`; and the bytes each of their runs may read, from what is left of
 * LEASE_BODY_BYTES (`runBodyBytes` shares them out over a run's deliveries). Pure.
 */
export function chainRoom(startedAt: number, now: number, busy: number, bodiesLeft: number): { lanes: number; bodyBytes: number } {
  const lanes = startsInTime(startedAt, now) ? Math.max(0, ATTEMPTS_AT_ONCE - busy) : 0;
  if (lanes === 0 || bodiesLeft <= 0) return { lanes: 0, bodyBytes: 0 };
  return { lanes, bodyBytes: Math.floor(bodiesLeft / lanes) };
}
