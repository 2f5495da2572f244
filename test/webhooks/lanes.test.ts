import { describe, expect, it } from "vitest";
import {
  answersQuickly,
  ATTEMPTS_AT_ONCE,
  chainRoom,
  runBodyBytes,
  leaseMsAt,
  RECORD_MS,
  startOrder,
  UNPROVEN_AT_ONCE,
  withinBodyBytes,
} from "../../src/webhooks/delivery/lanes";
import { HEALTH_WINDOW_MS, SLOW_MS } from "../../src/webhooks/delivery/admission";
import { WAIT_UNTIL_MS } from "../../src/lib/platform-limits";
import { ATTEMPT_TIMEOUT_MS, LEASE_MS } from "../../src/webhooks/wire/retry-schedule";
import { RUN_AT_MOST } from "../../src/webhooks/outbox/order";

const row = (id: string, subscriptionId: string, createdAt: number) => ({ id, subscriptionId, createdAt });

describe("a consumer invocation's lanes", () => {
  it.each([
    ["one subscription: the log's order", [row("c", "s", 3), row("a", "s", 1), row("b", "s", 2)], ["a", "b", "c"]],
    [
      "subscriptions take turns, the oldest delivery's first",
      [row("a1", "A", 1), row("a2", "A", 2), row("a3", "A", 3), row("b1", "B", 4), row("b2", "B", 5)],
      ["a1", "b1", "a2", "b2", "a3"],
    ],
    [
      "a busy subscription never fills the lanes before another's first",
      [...Array.from({ length: 8 }, (_, i) => row(`h${i}`, "H", i)), row("g", "G", 100)],
      ["h0", "g", "h1", "h2", "h3", "h4", "h5", "h6", "h7"],
    ],
    ["same age: by id", [row("b", "s", 1), row("a", "s", 1)], ["a", "b"]],
    ["none", [], []],
  ])("%s", (_name, rows, expected) => {
    expect(startOrder(rows).map((r) => r.id)).toEqual(expected);
  });

  it.each([
    [0, LEASE_MS],
    [ATTEMPTS_AT_ONCE - 1, LEASE_MS],
    [ATTEMPTS_AT_ONCE, LEASE_MS + ATTEMPT_TIMEOUT_MS],
    [99, LEASE_MS + Math.floor(99 / ATTEMPTS_AT_ONCE) * ATTEMPT_TIMEOUT_MS],
  ])("holds the lease of the attempt at position %i for %i ms", (position, lease) => {
    expect(leaseMsAt(position)).toBe(lease);
  });

  it.each([
    ["all fit", [3, 3, 3], 10, 0, [3, 3, 3], []],
    ["the first that fit, in order; none after one that does not", [4, 4, 2, 1], 9, 0, [4, 4], [2, 1]],
    ["one alone however large, when none is taken yet", [20, 1], 10, 0, [20], [1]],
    ["none when the invocation's other shards took the budget", [5], 3, 2, [], [5]],
  ])("leases bodies within the invocation's bytes: %s", (_name, sizes, left, taken, leased, putOff) => {
    const rows = sizes.map((bodyBytes, i) => ({ id: String(i), bodyBytes }));
    const result = withinBodyBytes(rows, { left, taken });
    expect(result.taken.map((row) => row.bodyBytes)).toEqual(leased);
    expect(result.over.map((row) => row.bodyBytes)).toEqual(putOff);
  });

  const NOW = 1_000_000;
  it.each([
    ["answers, no timeout, nothing in flight", { answers: 3, timeouts: 0, since: NOW - 1000, oldestStart: null }, true],
    ["more answers than timeouts", { answers: 5, timeouts: 3, since: NOW - 1000, oldestStart: null }, true],
    ["no answer yet (a new subscription)", { answers: 0, timeouts: 0, since: null, oldestStart: null }, false],
    ["as many timeouts as answers", { answers: 2, timeouts: 2, since: NOW - 1000, oldestStart: null }, false],
    ["answers, but an attempt in flight past SLOW_MS", { answers: 3, timeouts: 0, since: NOW - 1000, oldestStart: NOW - SLOW_MS - 1 }, false],
    ["answers long ago (its window is over)", { answers: 3, timeouts: 0, since: NOW - HEALTH_WINDOW_MS - 1, oldestStart: null }, false],
  ])("answers quickly: %s", (_name, state, quick) => {
    expect(answersQuickly(state, NOW)).toBe(quick);
  });

  it("lets an invocation's attempts to receivers not known to answer quickly all time out within waitUntil's 30 s, with a timeout's time to spare for the others", () => {
    const waves = Math.ceil(UNPROVEN_AT_ONCE / ATTEMPTS_AT_ONCE);
    expect(waves * ATTEMPT_TIMEOUT_MS + ATTEMPT_TIMEOUT_MS).toBeLessThanOrEqual(WAIT_UNTIL_MS);
  });
});

describe("the bytes each delivery of a run may read of its body (runBodyBytes)", () => {
  it.each([
    ["one run: an even part for each of its RUN_AT_MOST", 8_000_000, 1, Math.floor(8_000_000 / RUN_AT_MOST)],
    ["five runs share them", 8_000_000, 5, Math.floor(8_000_000 / (5 * RUN_AT_MOST))],
    ["no run", 8_000_000, 0, 0],
    ["nothing left", 0, 3, 0],
    ["less than nothing left (a delivery alone past the budget)", -500, 2, 0],
  ])("%s", (_, bytes, runs, expected) => {
    expect(runBodyBytes(bytes, runs)).toBe(expected);
  });
});

describe("the lanes a record gives to the next deliveries of ordered payments (chainRoom)", () => {
  const t0 = 1_000_000;
  const lastStart = t0 + WAIT_UNTIL_MS - ATTEMPT_TIMEOUT_MS - RECORD_MS;
  it.each([
    ["at the invocation's start, all lanes free", t0, 0, 8_000_000, { lanes: ATTEMPTS_AT_ONCE, bodyBytes: Math.floor(8_000_000 / ATTEMPTS_AT_ONCE) }],
    ["two lanes busy", t0 + 1000, 2, 8_000_000, { lanes: ATTEMPTS_AT_ONCE - 2, bodyBytes: Math.floor(8_000_000 / (ATTEMPTS_AT_ONCE - 2)) }],
    ["every lane busy", t0, ATTEMPTS_AT_ONCE, 8_000_000, { lanes: 0, bodyBytes: 0 }],
    ["more busy than lanes (some queued)", t0, ATTEMPTS_AT_ONCE + 3, 8_000_000, { lanes: 0, bodyBytes: 0 }],
    [
      "the last moment an attempt still ends and is recorded in time",
      lastStart,
      0,
      600,
      { lanes: ATTEMPTS_AT_ONCE, bodyBytes: Math.floor(600 / ATTEMPTS_AT_ONCE) },
    ],
    ["a millisecond later", lastStart + 1, 0, 8_000_000, { lanes: 0, bodyBytes: 0 }],
    ["no body bytes left", t0, 0, 0, { lanes: 0, bodyBytes: 0 }],
  ])("%s", (_, now, busy, left, expected) => {
    expect(chainRoom(t0, now, busy, left)).toEqual(expected);
  });
});
