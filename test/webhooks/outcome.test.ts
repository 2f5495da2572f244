import { describe, expect, it } from "vitest";
import { DEACTIVATE_AFTER_FAILING_MS, decideOutcome, type Outcome, type OutcomeInput } from "../../src/webhooks/delivery/outcome";
import { GIVE_UP_AFTER_MS } from "../../src/webhooks/wire/retry-schedule";

const NOW = Date.UTC(2026, 10, 22, 12);
const base: OutcomeInput = {
  attempts: 0,
  scheduleStartedAt: null,
  failingSince: null,
  responseStatus: 200,
  retryAfter: null,
  startedAt: NOW - 40,
  endedAt: NOW,
  random: () => 0.5, // no jitter
};

describe("decideOutcome", () => {
  // [case, what differs from a first attempt answered 200, what is expected of the outcome]
  const cases: [string, Partial<OutcomeInput>, Partial<Outcome>][] = [
    [
      "2xx succeeds and ends the failure streak",
      { failingSince: NOW - 1000 },
      { number: 1, status: "succeeded", retryInSeconds: null, failingSince: null, deactivate: false },
    ],
    ["204 is a 2xx", { responseStatus: 204 }, { status: "succeeded" }],
    [
      "a first 500 is retried in 5 s and starts the streak",
      { responseStatus: 500 },
      { status: "pending", retryInSeconds: 5, failingSince: NOW, deactivate: false },
    ],
    ["no answer (timeout, network) is retried", { responseStatus: null }, { status: "pending", retryInSeconds: 5 }],
    ["a 3xx is not followed: retried", { responseStatus: 302 }, { status: "pending", retryInSeconds: 5 }],
    [
      "the second failure waits 5 minutes",
      { responseStatus: 500, attempts: 1, scheduleStartedAt: NOW - 5000 },
      { number: 2, retryInSeconds: 300, scheduleStartedAt: NOW - 5000 },
    ],
    ["429 with Retry-After waits as asked", { responseStatus: 429, retryAfter: "120" }, { status: "pending", retryInSeconds: 120 }],
    ["503 with Retry-After waits as asked", { responseStatus: 503, retryAfter: "60" }, { retryInSeconds: 60 }],
    ["Retry-After on a 500 is ignored", { responseStatus: 500, retryAfter: "120" }, { retryInSeconds: 5 }],
    ["410 ends the delivery and deactivates", { responseStatus: 410 }, { status: "failed", retryInSeconds: null, deactivate: true }],
    [
      "past 3 days of retries it fails, kept",
      { responseStatus: 500, attempts: 10, scheduleStartedAt: NOW - GIVE_UP_AFTER_MS + 1000 },
      { status: "failed", retryInSeconds: null, number: 11 },
    ],
    [
      "failing for 5 days deactivates",
      { responseStatus: 500, failingSince: NOW - DEACTIVATE_AFTER_FAILING_MS },
      { status: "pending", deactivate: true, failingSince: NOW - DEACTIVATE_AFTER_FAILING_MS },
    ],
    ["failing just under 5 days does not", { responseStatus: 500, failingSince: NOW - DEACTIVATE_AFTER_FAILING_MS + 1 }, { deactivate: false }],
    [
      "a success after 5 days of failures keeps it active",
      { failingSince: NOW - DEACTIVATE_AFTER_FAILING_MS - 1 },
      { status: "succeeded", deactivate: false, failingSince: null },
    ],
    ["the schedule starts at the first attempt", { responseStatus: 500 }, { scheduleStartedAt: NOW - 40, scheduleFirstAttempt: 1 }],
    // A redelivered or recovered delivery (no schedule running) starts a fresh one: 5 s, 5 min, …
    [
      "after a redelivery, the 12th attempt's failure waits 5 s",
      { responseStatus: 500, attempts: 11 },
      { number: 12, retryInSeconds: 5, scheduleStartedAt: NOW - 40, scheduleFirstAttempt: 12 },
    ],
    [
      "the next failure of that schedule waits 5 minutes",
      { responseStatus: 500, attempts: 12, scheduleStartedAt: NOW - 5000, scheduleFirstAttempt: 12 },
      { number: 13, retryInSeconds: 300, scheduleFirstAttempt: 12 },
    ],
    [
      "a schedule from before its first attempt was kept counts from attempt 1",
      { responseStatus: 500, attempts: 2, scheduleStartedAt: NOW - 5000, scheduleFirstAttempt: null },
      { number: 3, retryInSeconds: 1800 },
    ],
  ];
  it.each(cases)("%s", (_name, input, expected) => {
    expect(decideOutcome({ ...base, ...input })).toMatchObject(expected);
  });
});
