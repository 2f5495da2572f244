import { describe, expect, it } from "vitest";
import { deferral, FULL_AND_WAITING_MS, retryTurn, STARTED_LATELY_MS, type Slot, HANGING_LIMIT, HANGING_MEMORY_MS, PER_SUBSCRIPTION, release, room, take, TOTAL } from "../../src/webhooks/in-flight";

/** Holds `held` slots, asks for one more at `now`, releases them all: whether it got one. */
function oneMore(subscription: string, held: (Slot | null)[], now: number): boolean {
  expect(held.every(Boolean)).toBe(true);
  const slot = take(subscription, now);
  for (const one of [...held, slot]) if (one) release(one, now);
  return slot !== null;
}

describe("in-flight slots", () => {
  // [case, attempts already in flight (their age in ms), attempts answered quickly in the last 15 s, gets a slot]
  const cases: [string, number[], number, boolean][] = [
    ["none in flight", [], 0, true],
    ["a few, answering", [10, 50, 200], 0, true],
    ["one hanging, the rest answering", [14_000, 10, 50], 0, true],
    ["one short of full, all hanging", Array(PER_SUBSCRIPTION - 1).fill(14_000), 0, true],
    ["full, all hanging", Array(PER_SUBSCRIPTION).fill(14_000), 0, false],
    ["full, all just started", Array(PER_SUBSCRIPTION).fill(5), 0, true],
    ["many, all just started", Array(3 * PER_SUBSCRIPTION).fill(5), 0, true],
    ["full, the oldest waiting over a second", [FULL_AND_WAITING_MS + 1, ...Array(PER_SUBSCRIPTION - 1).fill(5)], 0, true],
    ["a limit's worth waiting over a second", Array(PER_SUBSCRIPTION).fill(FULL_AND_WAITING_MS + 1), 0, false],
    ["one short of that, and many young", [...Array(PER_SUBSCRIPTION - 1).fill(FULL_AND_WAITING_MS + 1), ...Array(50).fill(5)], 0, true],
    // A busy receiver that hangs now and then: its hanging attempts are few beside its quick answers.
    ["full, all hanging, beside 2,000 quick answers", Array(PER_SUBSCRIPTION).fill(14_000), 2000, true],
    ["full, all hanging, beside one quick answer fewer than them", Array(PER_SUBSCRIPTION).fill(14_000), PER_SUBSCRIPTION - 1, false],
    ["full, all hanging, beside as many quick answers", Array(PER_SUBSCRIPTION).fill(14_000), PER_SUBSCRIPTION, true],
  ];
  it.each(cases)("%s", (_name, ages, quick, expected) => {
    const subscription = crypto.randomUUID();
    const now = 1_000_000;
    for (let i = 0; i < quick; i++) {
      const at = now - 10_000 + (i % 5000);
      release(take(subscription, at)!, at + 20);
    }
    expect(oneMore(subscription, ages.map((age) => take(subscription, now - age)), now)).toBe(expected);
  });

  it("forgets quick answers older than the attempt timeout", () => {
    const subscription = crypto.randomUUID();
    const now = 3_000_000;
    for (let i = 0; i < 500; i++) release(take(subscription, now - 20_000)!, now - 19_990);
    const held = Array.from({ length: PER_SUBSCRIPTION }, () => take(subscription, now - 14_000)!);
    expect(take(subscription, now)).toBeNull();
    held.forEach((slot) => release(slot, now));
  });

  it("frees a subscription's slots as its attempts end", () => {
    const subscription = crypto.randomUUID();
    const stuck = Array.from({ length: PER_SUBSCRIPTION }, () => take(subscription, 0)!);
    expect(take(subscription, FULL_AND_WAITING_MS + 1)).toBeNull();
    release(stuck[0]!);
    expect(take(subscription, FULL_AND_WAITING_MS + 1)).not.toBeNull();
  });
});

describe("a hanging subscription", () => {
  // [case, attempts that ended by timeout 15 s ago, attempts answered 1 s ago (a later ending
  //  weighs more: each decays by e every HANGING_MEMORY_MS), attempts in flight, gets a slot]
  const cases: [string, number, number, number, boolean][] = [
    ["no history, many just started", 0, 0, 3 * PER_SUBSCRIPTION, true],
    ["timed out lately, fewer than HANGING_LIMIT in flight", 20, 0, HANGING_LIMIT - 1, true],
    ["timed out lately, HANGING_LIMIT in flight", 20, 0, HANGING_LIMIT, false],
    ["one timeout on a quiet subscription, HANGING_LIMIT in flight", 1, 0, HANGING_LIMIT, false],
    ["more timeouts than answers", 20, 10, HANGING_LIMIT, false],
    ["recovering: as many answers as timeouts, the answers later", 20, 20, HANGING_LIMIT, true],
    // The soak's receiver: 5% of attempts hang, the rest answer.
    ["hangs now and then", 50, 950, 2 * PER_SUBSCRIPTION, true],
  ];
  it.each(cases)("%s", (_name, timeouts, answers, inFlight, expected) => {
    const subscription = crypto.randomUUID();
    const now = 10_000_000;
    for (let i = 0; i < timeouts; i++) release(take(subscription, now - 30_000)!, now - 15_000, "timed_out");
    for (let i = 0; i < answers; i++) release(take(subscription, now - 2_000)!, now - 1_000, "answered");
    expect(oneMore(subscription, Array.from({ length: inFlight }, () => take(subscription, now - 5)), now)).toBe(expected);
  });

  it("is not a busy receiver at its first timeout: the quick answers before it count", () => {
    const subscription = crypto.randomUUID();
    const now = 15_000_000;
    for (let i = 0; i < 950; i++) release(take(subscription, now - 5_000)!, now - 4_990, "answered");
    release(take(subscription, now - 16_000)!, now - 1_000, "timed_out");
    expect(oneMore(subscription, Array.from({ length: 2 * HANGING_LIMIT }, () => take(subscription, now - 5)), now)).toBe(true);
  });

  it("forgets its timeouts a few minutes after the last", () => {
    const subscription = crypto.randomUUID();
    const now = 20_000_000;
    for (let i = 0; i < 20; i++) release(take(subscription, now - 15_000)!, now, "timed_out");
    const held = Array.from({ length: HANGING_LIMIT }, () => take(subscription, now + 1)!);
    expect(take(subscription, now + 1)).toBeNull();
    expect(take(subscription, now + 5 * HANGING_MEMORY_MS)).not.toBeNull();
    held.forEach((slot) => release(slot, now));
  });

  it("spreads the retries of a wave of its timeouts, HANGING_LIMIT a round, and forgets each round once past", () => {
    const subscription = crypto.randomUUID();
    const now = 30_000_000; // the start of a round
    expect(retryTurn(subscription, () => 0, now)).toBe(0); // not hanging: the schedule decides
    for (let i = 0; i < 5; i++) release(take(subscription, now - 15_000)!, now, "timed_out");
    const wave = Array.from({ length: 2 * HANGING_LIMIT + 1 }, (_, i) => retryTurn(subscription, () => 0, now + i));
    expect(wave).toEqual([...Array(HANGING_LIMIT).fill(0), ...Array(HANGING_LIMIT).fill(15), 30]);
    // A round later, the next round's HANGING_LIMIT are due now; the round after has room again.
    expect(retryTurn(subscription, () => 0, now + 15_000)).toBe(15);
    // Whether or not those retries came back here, past rounds count no more.
    const later = now + 3 * 15_000;
    expect(Array.from({ length: HANGING_LIMIT + 1 }, () => retryTurn(subscription, () => 0, later))).toEqual([...Array(HANGING_LIMIT).fill(0), 15]);
  });

  it("puts off its further deliveries a timeout apart, HANGING_LIMIT at a time", () => {
    const subscription = crypto.randomUUID();
    const now = Date.now();
    for (let i = 0; i < 5; i++) release(take(subscription, now - 15_000)!, now, "timed_out");
    const delays = Array.from({ length: 3 * HANGING_LIMIT }, () => deferral(subscription, () => 0, now));
    expect(delays.slice(0, HANGING_LIMIT).every((delay) => delay === 15)).toBe(true);
    expect(delays.slice(HANGING_LIMIT, 2 * HANGING_LIMIT).every((delay) => delay === 30)).toBe(true);
    expect(delays.at(-1)).toBe(45);
  });

  it.each([
    { random: 0, seconds: 15 },
    { random: 0.5, seconds: 22 },
    { random: 0.999, seconds: 29 },
  ])("sends a put-off delivery back at a random moment of its round, not all at its start (random $random: $seconds s)", ({ random, seconds }) => {
    // A round's deliveries coming back together stalled the local queue for 1-2 s (isolation-probe).
    const subscription = crypto.randomUUID();
    const now = 50_000_000;
    for (let i = 0; i < 5; i++) release(take(subscription, now - 15_000)!, now, "timed_out");
    expect(deferral(subscription, () => random, now)).toBe(seconds);
  });

  it.each([
    { random: 0, seconds: 15 },
    { random: 0.999, seconds: 29 },
  ])("holds a retry past its round's limit back to a random moment of the next round (random $random: $seconds s)", ({ random, seconds }) => {
    const subscription = crypto.randomUUID();
    const now = 60_000_000; // the start of a round
    for (let i = 0; i < 5; i++) release(take(subscription, now - 15_000)!, now, "timed_out");
    for (let i = 0; i < HANGING_LIMIT; i++) expect(retryTurn(subscription, () => random, now)).toBe(0);
    expect(retryTurn(subscription, () => random, now)).toBe(seconds);
  });

  it("keeps nothing of a put-off delivery once its round is past, even if its message never came back", () => {
    // The sweeper re-sends a put-off delivery whose queue send failed: no message comes back to
    // the consumer that put it off, and its later put-offs must not wait for it.
    const subscription = crypto.randomUUID();
    const now = 40_000_000;
    for (let i = 0; i < 5; i++) release(take(subscription, now - 15_000)!, now, "timed_out");
    for (let round = 0; round < 3; round++) {
      const at = now + round * 2 * 15_000;
      expect(Array.from({ length: HANGING_LIMIT + 1 }, () => deferral(subscription, () => 0, at))).toEqual([...Array(HANGING_LIMIT).fill(15), 30]);
    }
  });
});

/** Whether `promise` settles within 50 ms. */
async function settles(promise: Promise<unknown>): Promise<boolean> {
  return Promise.race([promise.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 50))]);
}

describe("room for another batch", () => {
  it("waits while TOTAL attempts started in the last half second, not for older ones", async () => {
    const now = 5_000_000;
    const held = Array.from({ length: TOTAL }, (_, i) => take(`room-${i}`, now)!);
    const waiting = room(() => now + 10);
    expect(await settles(waiting)).toBe(false);
    held.forEach((slot) => release(slot));
    await waiting;
    // A hanging receiver's first attempts at a burst's start: they hold the next batch back for
    // half a second, not until they count as stuck (FULL_AND_WAITING_MS, a second).
    const old = Array.from({ length: TOTAL }, (_, i) => take(`room-old-${i}`, now)!);
    expect(await settles(room(() => now + STARTED_LATELY_MS))).toBe(false);
    expect(await settles(room(() => now + STARTED_LATELY_MS + 1))).toBe(true);
    expect(await settles(room(() => now + FULL_AND_WAITING_MS))).toBe(true); // none stuck yet
    old.forEach((slot) => release(slot));
  });
});
