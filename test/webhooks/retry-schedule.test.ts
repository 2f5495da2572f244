import { describe, expect, it } from "vitest";
import { GIVE_UP_AFTER_MS, nextRetryDelay, parseRetryAfter, queueDelay } from "../../src/webhooks/wire/retry-schedule";

const T0 = Date.UTC(2026, 10, 21, 10);
const H = 3600;
const mid = () => 0.5; // no jitter
const low = () => 0; // -10%
const high = () => 0.999999; // +10%

describe("nextRetryDelay", () => {
  it.each([
    [1, 5],
    [2, 5 * 60],
    [3, 30 * 60],
    [4, 2 * H],
    [5, 5 * H],
    [6, 10 * H],
    [7, 12 * H],
    [8, 12 * H],
  ])("after attempt %d waits %d s", (attempts, seconds) => {
    expect(nextRetryDelay({ attempts, scheduleStartedAt: T0, now: T0, random: mid })).toBe(seconds);
  });

  it.each([1, 2, 3, 4, 5, 6])("keeps jitter within ±10%% (attempt %d), never under 5 s or over 12 h", (attempts) => {
    const at = (random: () => number) => nextRetryDelay({ attempts, scheduleStartedAt: T0, now: T0, random })!;
    const base = at(mid);
    expect(at(low)).toBeGreaterThanOrEqual(Math.max(5, Math.floor(base * 0.9)));
    expect(at(high)).toBeLessThanOrEqual(Math.min(12 * H, Math.ceil(base * 1.1)));
    expect(at(low)).toBeLessThan(at(high) + 1);
  });

  it("honours Retry-After, clamped to 5 s .. 12 h", () => {
    const with_ = (retryAfterSeconds: number) => nextRetryDelay({ attempts: 1, scheduleStartedAt: T0, now: T0, random: mid, retryAfterSeconds });
    expect(with_(120)).toBe(120);
    expect(with_(0)).toBe(5);
    expect(with_(7 * 24 * H)).toBe(12 * H);
  });

  it("gives up when the next attempt would fall past 3 days from the first", () => {
    const late = T0 + GIVE_UP_AFTER_MS - 11 * H * 1000;
    expect(nextRetryDelay({ attempts: 9, scheduleStartedAt: T0, now: late, random: mid })).toBeNull();
    const early = T0 + GIVE_UP_AFTER_MS - 13 * H * 1000;
    expect(nextRetryDelay({ attempts: 9, scheduleStartedAt: T0, now: early, random: mid })).toBe(12 * H);
  });

  it("makes about a dozen attempts over the 3 days", () => {
    let now = T0;
    let attempts = 1;
    for (;;) {
      const delay = nextRetryDelay({ attempts, scheduleStartedAt: T0, now, random: mid });
      if (delay === null) break;
      now += delay * 1000;
      attempts += 1;
    }
    expect(attempts).toBe(11);
    expect(now - T0).toBeLessThanOrEqual(GIVE_UP_AFTER_MS);
  });
});

describe("parseRetryAfter", () => {
  it.each([
    ["120", 120],
    [" 7 ", 7],
    [new Date(T0 + 90_000).toUTCString(), 90],
    ["soon", null],
    [null, null],
  ])("%j -> %j", (value, seconds) => {
    expect(parseRetryAfter(value, T0)).toBe(seconds);
  });
});

describe("queueDelay", () => {
  it("chains waits longer than the queue's 12 h maximum", () => {
    expect(queueDelay(5)).toBe(5);
    expect(queueDelay(12 * H)).toBe(12 * H);
    expect(queueDelay(30 * H)).toBe(12 * H);
    expect(queueDelay(4.2)).toBe(5);
  });
});

describe("the soak's sped-up retry clock", () => {
  it.each([
    [1, 0.005],
    [2, 0.3],
    [7, 43.2],
  ])("with scale 0.001, after attempt %d waits %d s", (attempts, seconds) => {
    expect(nextRetryDelay({ attempts, scheduleStartedAt: T0, now: T0, random: mid, scale: 0.001 })).toBeCloseTo(seconds, 9);
  });

  it("gives up after 3 days on the same sped-up clock", () => {
    const scale = 0.001;
    expect(nextRetryDelay({ attempts: 9, scheduleStartedAt: T0, now: T0 + GIVE_UP_AFTER_MS * scale - 60_000, random: mid, scale })).toBeCloseTo(43.2, 9);
    expect(nextRetryDelay({ attempts: 9, scheduleStartedAt: T0, now: T0 + GIVE_UP_AFTER_MS * scale, random: mid, scale })).toBeNull();
  });
});
