import { describe, expect, it } from "vitest";
import { ATTEMPT_TIMEOUT_MS } from "../../src/webhooks/wire/retry-schedule";
import {
  admit,
  BURST_CAP,
  BUSY_DELAY_MS,
  HEALTH_WINDOW_MS,
  backoffAfter,
  BACKOFF_MIN_TIMEOUTS,
  BACKOFF_MS,
  IN_FLIGHT_CAP,
  planLeases,
  PROBE_CAP,
  putOffAt,
  SLOW_MS,
  type AdmissionState,
} from "../../src/webhooks/delivery/admission";

const NOW = Date.UTC(2026, 10, 25, 12);
const state = (fields: Partial<AdmissionState> = {}): AdmissionState => ({
  inFlight: 0,
  oldestStart: null,
  backoffUntil: null,
  timeouts: 0,
  answers: 0,
  since: NOW - 1000,
  ...fields,
});

describe("admit", () => {
  // [case, state, deliveries asking, expected admission]
  const busy = { comeBackAt: NOW + BUSY_DELAY_MS, spreadMs: 1000 };
  const slowSince = NOW - SLOW_MS - 1;
  const cases: [string, AdmissionState, number, { cap: number; admitted: number; comeBackAt: number; spreadMs: number }][] = [
    ["idle: all it asks", state(), 5, { cap: BURST_CAP, admitted: 5, ...busy }],
    ["busy, every attempt young: up to the burst cap", state({ inFlight: BURST_CAP - 3, oldestStart: NOW - 100 }), 5, { cap: BURST_CAP, admitted: 3, ...busy }],
    [
      "at the burst cap, answering quickly: none, back shortly",
      state({ inFlight: BURST_CAP, oldestStart: NOW - SLOW_MS }),
      5,
      { cap: BURST_CAP, admitted: 0, ...busy },
    ],
    [
      "its oldest attempt waiting past SLOW_MS, under the slow cap: up to it",
      state({ inFlight: IN_FLIGHT_CAP - 2, oldestStart: slowSince }),
      5,
      { cap: IN_FLIGHT_CAP, admitted: 2, comeBackAt: slowSince + ATTEMPT_TIMEOUT_MS, spreadMs: BACKOFF_MS },
    ],
    [
      "at the slow cap: none, back when its oldest attempt has surely ended",
      state({ inFlight: IN_FLIGHT_CAP, oldestStart: slowSince }),
      5,
      { cap: IN_FLIGHT_CAP, admitted: 0, comeBackAt: slowSince + ATTEMPT_TIMEOUT_MS, spreadMs: BACKOFF_MS },
    ],
    ["over a cap (leases that lapse count no more): none", state({ inFlight: BURST_CAP + 7, oldestStart: NOW }), 1, { cap: BURST_CAP, admitted: 0, ...busy }],
    [
      "backed off: none until the back-off ends",
      state({ backoffUntil: NOW + 5000, timeouts: 9 }),
      5,
      { cap: 0, admitted: 0, comeBackAt: NOW + 5000, spreadMs: BACKOFF_MS },
    ],
    [
      "back-off ended, still hanging: probes only",
      state({ backoffUntil: NOW, timeouts: 9, answers: 2 }),
      50,
      { cap: PROBE_CAP, admitted: PROBE_CAP, comeBackAt: NOW + BACKOFF_MS, spreadMs: BACKOFF_MS },
    ],
    [
      "hanging, probes in flight: the rest of the probes",
      state({ timeouts: 9, inFlight: PROBE_CAP - 4 }),
      50,
      { cap: PROBE_CAP, admitted: 4, comeBackAt: NOW + BACKOFF_MS, spreadMs: BACKOFF_MS },
    ],
    ["answers outnumber timeouts: the full cap", state({ timeouts: 9, answers: 10 }), 50, { cap: BURST_CAP, admitted: 50, ...busy }],
    ["a timeout or two of a quiet receiver: the full cap", state({ timeouts: BACKOFF_MIN_TIMEOUTS - 1 }), 50, { cap: BURST_CAP, admitted: 50, ...busy }],
    ["timeouts of a window gone by: forgotten", state({ timeouts: 50, since: NOW - HEALTH_WINDOW_MS }), 50, { cap: BURST_CAP, admitted: 50, ...busy }],
    ["nothing asked: nothing admitted", state(), 0, { cap: BURST_CAP, admitted: 0, ...busy }],
  ];
  it.each(cases)("%s", (_name, given, wanted, expected) => {
    expect(admit(given, wanted, NOW)).toEqual(expected);
  });
});

describe("backoffAfter", () => {
  // [case, window after the attempts, did one of them time out, expected backoff_until]
  const cases: [string, { timeouts: number; answers: number; since: number | null }, boolean, number | null][] = [
    ["timeouts outnumber answers, one just now: held a timeout long", { timeouts: BACKOFF_MIN_TIMEOUTS, answers: 0, since: NOW }, true, NOW + BACKOFF_MS],
    ["timeouts outnumber answers, but these were answered: unchanged", { timeouts: BACKOFF_MIN_TIMEOUTS, answers: 1, since: NOW }, false, null],
    ["as many answers as timeouts: not held", { timeouts: 5, answers: 5, since: NOW }, true, null],
    ["fewer timeouts than the least that holds", { timeouts: BACKOFF_MIN_TIMEOUTS - 1, answers: 0, since: NOW }, true, null],
  ];
  it.each(cases)("%s", (_name, health, timedOut, expected) => {
    expect(backoffAfter(health, timedOut, NOW)).toBe(expected);
  });
});

describe("putOffAt", () => {
  const held = admit(state({ backoffUntil: NOW + 5000, timeouts: 9 }), 100, NOW);
  it.each([
    ["the first of a backed-off subscription's: within the round after its back-off", 0, 0.5, NOW + 5000 + BACKOFF_MS / 2],
    ["the last of the first round's probes", PROBE_CAP - 1, 0, NOW + 5000],
    ["the next: a round later", PROBE_CAP, 0, NOW + 5000 + BACKOFF_MS],
    ["far down a backlog: never past the last round", 10_000, 0, NOW + 5000 + 60 * BACKOFF_MS],
  ])("%s", (_name, k, random, expected) => {
    expect(putOffAt(held, k, () => random)).toBe(expected);
  });

  it("spreads a busy subscription's over a second after its turn", () => {
    const busy = admit(state({ inFlight: BURST_CAP, oldestStart: NOW }), 5, NOW);
    expect(putOffAt(busy, 0, () => 0.999)).toBe(NOW + BUSY_DELAY_MS + 999);
  });
});

describe("planLeases", () => {
  it("leases each subscription's oldest up to what it admits, with their ranks, and puts off the rest", () => {
    const plan = planLeases(
      [
        { state: state({ inFlight: BURST_CAP - 2, oldestStart: NOW }), ids: ["a1", "a2", "a3"] },
        { state: state({ backoffUntil: NOW + 1000, timeouts: 9 }), ids: ["b1"] },
        { state: state(), ids: ["c1"] },
      ],
      NOW,
      () => 0,
    );
    expect(plan.lease).toEqual([
      { id: "a1", cap: BURST_CAP, rank: 1 },
      { id: "a2", cap: BURST_CAP, rank: 2 },
      { id: "c1", cap: BURST_CAP, rank: 1 },
    ]);
    expect(plan.putOff).toEqual([
      { id: "a3", at: NOW + BUSY_DELAY_MS },
      { id: "b1", at: NOW + 1000 },
    ]);
  });
});
