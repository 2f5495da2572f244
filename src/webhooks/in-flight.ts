/**
 * The attempts this isolate has in flight, in all and per subscription. A subscription whose
 * receiver is slow (take() says when) gets no new attempt: its further deliveries are put off,
 * spread so that at most PER_SUBSCRIPTION come back each round (rounds.ts). So a receiver that
 * hangs holds only its own attempts while every other subscription's deliveries go on. The
 * consumer takes a new batch only while fewer than TOTAL of its attempts started in the last
 * STARTED_LATELY_MS: past that, more concurrent attempts only slow each other down (measured: 2,000 allowed, a burst of 5,000
 * events delivered at 161 a second with p99 5.6 s; 100 allowed, 401 a second with p99 219 ms).
 * A subscription whose attempts lately ended by timeout more often than by an answer is hanging:
 * it keeps only HANGING_LIMIT attempts in flight (probes: an answer lifts the limit), so a receiver
 * that never answers does not start a wave of attempts each timeout beside everyone else's, and
 * its retries are spread (retryTurn) instead of coming back together after each wave of timeouts.
 */
import { ATTEMPT_TIMEOUT_MS } from "./attempt";
import { calendar, ROUND_MS } from "./rounds";

export const TOTAL = 100;
export const PER_SUBSCRIPTION = 100;
export const FULL_AND_WAITING_MS = 1000;
/**
 * How recent an attempt's start must be for it to count against TOTAL (room()). A hanging
 * receiver's first attempts, before take() tells them stuck, count only this long: with a second,
 * the 100 it gathered at a burst's start held every batch back until they were a second old, and
 * the healthy subscriptions' p99 took that wait (tools/bench/probes/isolation-probe.mjs measures it).
 */
export const STARTED_LATELY_MS = 500;
export const HANGING_LIMIT = 10;
/** How long a timeout or an answer counts toward telling a hanging subscription (decays by e each). */
export const HANGING_MEMORY_MS = 60_000;

let total = 0;
/** The attempts in flight per subscription, each a slot holding when it started. */
export type Slot = { subscriptionId: string; at: number };
const bySubscription = new Map<string, Set<Slot>>();

/**
 * Takes a slot for an attempt to this subscription, or null when the subscription is slow:
 * PER_SUBSCRIPTION of its attempts have each waited over a second (stretched when the whole
 * isolate answers slowly), and they outnumber its attempts answered within that time over the
 * last attempt timeout. So a busy receiver that hangs now and then (the soak's 5%: at 140
 * deliveries a second, 100 of its attempts hang at once, beside 2,000 answered quickly) keeps
 * its pace, and one that hangs on every request holds at most PER_SUBSCRIPTION waiting attempts.
 * Never waits: a delivery without a slot is put off.
 */
export function take(subscriptionId: string, now = Date.now()): Slot | null {
  const slots = bySubscription.get(subscriptionId) ?? new Set<Slot>();
  const waited = waitedMs();
  let stuck = 0;
  for (const slot of slots) if (now - slot.at > waited) stuck++;
  if (stuck >= PER_SUBSCRIPTION && stuck > quickAnswers(subscriptionId, now)) return null;
  if (hanging(subscriptionId, now) && slots.size >= HANGING_LIMIT) return null; // (also forgets old timeouts)
  const slot = { subscriptionId, at: now };
  slots.add(slot);
  bySubscription.set(subscriptionId, slots);
  total++;
  return slot;
}

/** A moving average of how long receivers take to answer, in this isolate: under load every answer is slower. */
let typicalAnswerMs = 0;

/** Notes how long an answered attempt took (an attempt without an answer says nothing of load). */
export function answered(durationMs: number): void {
  typicalAnswerMs = typicalAnswerMs === 0 ? durationMs : typicalAnswerMs * 0.95 + durationMs * 0.05;
}

/** How long an attempt may wait before it counts as stuck. */
function waitedMs(): number {
  return Math.max(FULL_AND_WAITING_MS, 2 * typicalAnswerMs);
}

/** When each subscription's recent attempts that ended within waitedMs() ended, oldest first. */
const quick = new Map<string, number[]>();

/** A subscription's attempts that ended quickly over the last attempt timeout. */
function quickAnswers(subscriptionId: string, now: number): number {
  const ends = quick.get(subscriptionId);
  if (!ends) return 0;
  while (ends.length > 0 && ends[0]! < now - ATTEMPT_TIMEOUT_MS) ends.shift();
  if (ends.length === 0) quick.delete(subscriptionId);
  return ends.length;
}

/** Per subscription: its attempts lately ended by timeout and by an answer, decayed to `at`. */
type Endings = { timeouts: number; answers: number; at: number };
const endings = new Map<string, Endings>();

/** `ends` as they weigh at `now`: each ending's weight falls by e every HANGING_MEMORY_MS. */
function decayed(ends: Endings, now: number): Endings {
  const kept = Math.exp(-Math.max(0, now - ends.at) / HANGING_MEMORY_MS);
  return { timeouts: ends.timeouts * kept, answers: ends.answers * kept, at: Math.max(now, ends.at) };
}

/**
 * Whether a subscription's attempts lately timed out more often than they were answered (each
 * ending's weight decays by e every HANGING_MEMORY_MS; under half a timeout left is forgotten).
 */
function hanging(subscriptionId: string, now: number): boolean {
  const ends = endings.get(subscriptionId);
  if (!ends) return false;
  if (decayed(ends, now).timeouts < 0.5) {
    endings.delete(subscriptionId);
    return false;
  }
  return ends.timeouts > ends.answers;
}

/** An attempt ended: answered (any status), timed out, or neither (a network error, nothing sent). */
export type Ending = "answered" | "timed_out" | "other";

export function release(slot: Slot, now = Date.now(), ending: Ending = "other"): void {
  const slots = bySubscription.get(slot.subscriptionId);
  if (!slots?.delete(slot)) return;
  // Answers count only beside timeouts: a subscription that never timed out keeps no entry. Its
  // first timeout starts the entry with the attempts that ended quickly over the last timeout, so a
  // busy receiver that hangs now and then is not taken for hanging at its first timeout (the soak:
  // at that moment every further delivery of its three subscriptions was put off, and with no
  // attempt left to be answered the timeouts of those already in flight kept it "hanging").
  if (ending === "timed_out" || (ending === "answered" && endings.has(slot.subscriptionId))) {
    const kept = endings.get(slot.subscriptionId) ?? { timeouts: 0, answers: quickAnswers(slot.subscriptionId, now), at: now };
    const next = decayed(kept, now);
    if (ending === "timed_out") next.timeouts++;
    else next.answers++;
    endings.set(slot.subscriptionId, next);
  }
  if (slots.size === 0) bySubscription.delete(slot.subscriptionId);
  total = Math.max(0, total - 1);
  if (now - slot.at <= waitedMs()) {
    const ends = quick.get(slot.subscriptionId) ?? [];
    ends.push(now);
    quick.set(slot.subscriptionId, ends);
    quickAnswers(slot.subscriptionId, now); // drops what is older than the timeout
  }
}

/** Where a slow subscription's deliveries are sent to come back, a limit's worth a round. */
const comingBack = calendar();

/**
 * Seconds to put off one more delivery of a subscription at its limit: to the first coming round
 * with room for it (PER_SUBSCRIPTION a round, HANGING_LIMIT while the subscription is hanging).
 */
export function deferral(subscriptionId: string, random: () => number = Math.random, now = Date.now()): number {
  const limit = hanging(subscriptionId, now) ? HANGING_LIMIT : PER_SUBSCRIPTION;
  return secondsAway(comingBack.book(subscriptionId, 1, limit, now), random);
}

/**
 * Seconds a failed attempt's retry must wait at least: 0 (its schedule decides) unless its
 * subscription is hanging. Then the first HANGING_LIMIT retries of a round keep their schedule,
 * and each further one waits for the first round with room, beside the put-off deliveries: the
 * wave of timeouts of a receiver that hangs does not come back as a wave only to be put off.
 */
export function retryTurn(subscriptionId: string, random: () => number = Math.random, now = Date.now()): number {
  if (!hanging(subscriptionId, now)) return 0;
  return secondsAway(comingBack.book(subscriptionId, 0, HANGING_LIMIT, now), random);
}

/**
 * Seconds until the given round (0 for this one), at a random moment within it: a round's
 * deliveries come back spread over its 15 s, not together at its start. (Measured with
 * tools/bench/probes/isolation-probe.mjs: spread over 3 s, the first round's 100 put-off deliveries of a
 * hanging receiver came back together 15 s into a burst, and the local queue stalled for 1-2 s,
 * the healthy subscriptions' p99 934, 564 and 1,251 ms; spread over the round, 390, 380, 402 ms.)
 */
function secondsAway(rounds: number, random: () => number): number {
  const round = ROUND_MS / 1000;
  return rounds === 0 ? 0 : rounds * round + Math.floor(random() * round);
}

/**
 * Resolves once the isolate has room for another batch: fewer than TOTAL attempts started in the
 * last STARTED_LATELY_MS. Older ones are likely a slow receiver's, which hold only their own
 * subscription back.
 */
export async function room(now: () => number = Date.now): Promise<void> {
  while (busy(now()) >= TOTAL) await new Promise((resolve) => setTimeout(resolve, 10));
}

function busy(at: number): number {
  if (total < TOTAL) return total;
  let young = 0;
  for (const slots of bySubscription.values()) for (const slot of slots) if (at - slot.at <= STARTED_LATELY_MS) young++;
  return young;
}
