import { describe, expect, it } from "vitest";
import { FULL_AND_WAITING_MS, PER_SUBSCRIPTION, release, room, take, TOTAL } from "../../src/webhooks/in-flight";

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
    const held = ages.map((age) => take(subscription, now - age)!);
    expect(held.every(Boolean)).toBe(true);
    const slot = take(subscription, now);
    expect(slot !== null).toBe(expected);
    for (const one of [...held, slot]) if (one) release(one, now);
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

describe("room for another batch", () => {
  it("waits while TOTAL attempts started in the last second, not for older ones", async () => {
    const now = 5_000_000;
    const held = Array.from({ length: TOTAL }, (_, i) => take(`room-${i}`, now)!);
    let ready = false;
    const waiting = room(() => now + 10).then(() => (ready = true));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(ready).toBe(false);
    held.forEach(release);
    await waiting;
    const old = Array.from({ length: TOTAL }, (_, i) => take(`room-old-${i}`, now)!);
    await room(() => now + FULL_AND_WAITING_MS + 1); // all of them are a slow receiver's by now
    old.forEach(release);
  });
});
