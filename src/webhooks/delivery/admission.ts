/**
 * The admission rule: how many of a subscription's due deliveries may be leased now, decided
 * before any is leased, from state every consumer invocation and isolate sees in D1:
 *   - in flight: the subscription's deliveries leased and not yet ended (a lease that lapsed,
 *     its worker dead, no longer counts); never more than BURST_CAP, and never more than
 *     IN_FLIGHT_CAP once its oldest has waited past SLOW_MS (a slow receiver);
 *   - backoff_until: set on the subscription when its recent timeouts outnumber its recent answers;
 *     nothing of it is leased before then;
 *   - past backoff_until, while its timeouts still outnumber its answers, PROBE_CAP attempts at once:
 *     an answer lifts the limit, another timeout backs it off again.
 * A delivery not admitted is put off unleased: it keeps its row, its place and its attempts, and
 * comes back when the rule says. Pure: the consumer reads the state, asks here, and its lease
 * statement checks the cap again against the live count, so two invocations never overfill it.
 */
import { ATTEMPT_TIMEOUT_MS } from "../wire/retry-schedule";

/** Attempts in flight at once while its oldest has waited past SLOW_MS: a slow receiver's cap. */
export const IN_FLIGHT_CAP = 100;
/**
 * Attempts in flight at once while every one is younger than SLOW_MS: a receiver that answers
 * keeps the pace of a backlog (measured: with 100 here too, a drain of 15,000 deliveries ran at
 * 335 a second, each wave of put-off deliveries coming back to find the cap full again; the
 * queue's batches already bound how many start together).
 */
export const BURST_CAP = 1000;
export const PROBE_CAP = 10;
/** How long a hanging subscription backs off: one attempt timeout. */
export const BACKOFF_MS = ATTEMPT_TIMEOUT_MS;
/** Timeouts and answers count toward holding for this long (a fixed window on the subscription). */
export const HEALTH_WINDOW_MS = 60_000;
/** Fewer timeouts than this never back off: one hang of a busy receiver is not a hanging receiver. */
export const BACKOFF_MIN_TIMEOUTS = 3;
/** A subscription at its cap but answering: its further deliveries come back this much later. */
export const BUSY_DELAY_MS = 2_000;
/**
 * A subscription at its cap whose oldest attempt in flight started longer ago than this is slow:
 * its further deliveries come back when that attempt has surely ended (its timeout), not every
 * BUSY_DELAY_MS (measured: a receiver that hangs from the start had its put-off deliveries
 * cycle through the queue every 2 s until its first timeouts, and the healthy subscriptions' p99
 * beside it went from 145 ms to 3.9 s).
 */
export const SLOW_MS = 1_000;

/** A subscription's recent endings, as kept on its row (a window that started `since`). */
export interface Health {
  timeouts: number;
  answers: number;
  since: number | null;
}

export interface AdmissionState extends Health {
  inFlight: number;
  /** When its oldest attempt in flight started; null with none in flight. */
  oldestStart: number | null;
  backoffUntil: number | null;
}

export interface Admission {
  /** How many attempts may be in flight at once now; 0 while held. */
  cap: number;
  /** How many of the deliveries asked for may be leased now. */
  admitted: number;
  /** When the others come back (the first of them; see putOffAt). */
  comeBackAt: number;
  /** Over how long after comeBackAt they come back, each at a random moment. */
  spreadMs: number;
}

/** The window's counts as they stand at `now`: a window older than HEALTH_WINDOW_MS counts nothing. */
export function healthAt(health: Health, now: number): Health {
  return health.since !== null && now - health.since < HEALTH_WINDOW_MS ? health : { timeouts: 0, answers: 0, since: null };
}

/** Whether a subscription's recent attempts time out more than they are answered. */
export function hanging(health: Health, now: number): boolean {
  const { timeouts, answers } = healthAt(health, now);
  return timeouts >= BACKOFF_MIN_TIMEOUTS && timeouts > answers;
}

/** How many of `wanted` due deliveries of a subscription may be leased now, and when the rest come back. */
export function admit(state: AdmissionState, wanted: number, now: number): Admission {
  if (state.backoffUntil !== null && state.backoffUntil > now) return { cap: 0, admitted: 0, comeBackAt: state.backoffUntil, spreadMs: BACKOFF_MS };
  const probing = hanging(state, now);
  const slow = state.oldestStart !== null && now - state.oldestStart > SLOW_MS;
  const cap = probing ? PROBE_CAP : slow ? IN_FLIGHT_CAP : BURST_CAP;
  const admitted = Math.max(0, Math.min(wanted, cap - state.inFlight));
  if (probing) return { cap, admitted, comeBackAt: now + BACKOFF_MS, spreadMs: BACKOFF_MS };
  if (slow) return { cap, admitted, comeBackAt: Math.max(now, state.oldestStart! + ATTEMPT_TIMEOUT_MS), spreadMs: BACKOFF_MS };
  return { cap, admitted, comeBackAt: now + BUSY_DELAY_MS, spreadMs: 1000 };
}

/**
 * When the k-th (0-based) delivery put off by one decision comes back: a cap's worth a round (a
 * round is spreadMs long) from comeBackAt on, each at a random moment of its round, so a slow or
 * hanging receiver's backlog returns a few at a time instead of as one wave (at most LAST_ROUND
 * rounds out).
 */
export const LAST_ROUND = 60;
export function putOffAt(admission: Admission, k: number, random: () => number): number {
  const perRound = Math.max(PROBE_CAP, admission.cap);
  const round = Math.min(LAST_ROUND, Math.floor(k / perRound));
  return Math.round(admission.comeBackAt + round * admission.spreadMs + random() * admission.spreadMs);
}

/**
 * The subscription's backoff_until after attempts ended, from its window as they left it: backed off for
 * BACKOFF_MS from now when one of them timed out and timeouts outnumber answers; else unchanged (null).
 */
export function backoffAfter(health: Health, timedOut: boolean, now: number): number | null {
  return timedOut && hanging(health, now) ? now + BACKOFF_MS : null;
}

/**
 * Which deliveries to lease (each with its subscription's cap and its rank under it, and how long
 * its lease holds when not LEASE_MS: lanes.ts) and which to put off until when.
 */
export interface LeasePlan {
  lease: { id: string; cap: number; rank: number; leaseMs?: number }[];
  /** Those that wait for an earlier delivery of their payment (outbox/order.ts): not leased, their messages acked. */
  waiting?: string[];
  putOff: { id: string; at: number }[];
}

/** One subscription's due deliveries in a batch, oldest first, with its state. */
export interface Asking {
  state: AdmissionState;
  ids: string[];
}

/** The rule over a batch: each subscription's oldest deliveries up to what it admits are leased, the rest put off. */
export function planLeases(asking: Asking[], now: number, random: () => number): LeasePlan {
  const plan: LeasePlan = { lease: [], putOff: [] };
  for (const { state, ids } of asking) {
    const admission = admit(state, ids.length, now);
    ids.forEach((id, k) => {
      if (k < admission.admitted) plan.lease.push({ id, cap: admission.cap, rank: k + 1 });
      else plan.putOff.push({ id, at: putOffAt(admission, k - admission.admitted, random) });
    });
  }
  return plan;
}
