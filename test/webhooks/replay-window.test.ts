import { describe, expect, it } from "vitest";
import { CLOCK_SLACK_MS, MAX_REPLAY_DAYS, replayWindow } from "../../src/webhooks/replays/window";

const NOW = Date.UTC(2026, 10, 28, 12);
const DAY = 86_400_000;
const ids = (n: number) => Array.from({ length: n }, (_, i) => `pmt_${i}`);

describe("a replay's window", () => {
  it.each([
    ["a day, until defaulting to now", { since: NOW - DAY, until: undefined, paymentIds: undefined }, { since: NOW - DAY, until: NOW, paymentIds: null }],
    [
      "exactly 400 days",
      { since: NOW - MAX_REPLAY_DAYS * DAY, until: NOW, paymentIds: undefined },
      { since: NOW - MAX_REPLAY_DAYS * DAY, until: NOW, paymentIds: null },
    ],
    [
      "until a little ahead of the clock, taken as now",
      { since: NOW - DAY, until: NOW + CLOCK_SLACK_MS, paymentIds: undefined },
      { since: NOW - DAY, until: NOW, paymentIds: null },
    ],
    [
      "50 payments, a repeat counted once",
      { since: NOW - DAY, until: NOW, paymentIds: [...ids(50), "pmt_0"] },
      { since: NOW - DAY, until: NOW, paymentIds: ids(50) },
    ],
    ["an empty window at one instant", { since: NOW - DAY, until: NOW - DAY, paymentIds: undefined }, { since: NOW - DAY, until: NOW - DAY, paymentIds: null }],
  ])("takes %s", (_, ask, expected) => {
    expect(replayWindow(ask, NOW)).toEqual(expected);
  });

  it.each([
    ["reversed", { since: NOW - DAY, until: NOW - 2 * DAY, paymentIds: undefined }, { until: ["Ensure until is not before since."] }],
    [
      "over 400 days",
      { since: NOW - MAX_REPLAY_DAYS * DAY - 1, until: NOW, paymentIds: undefined },
      { since: ["Ensure the window from since to until spans at most 400 days."] },
    ],
    ["since in the future", { since: NOW + 1, until: undefined, paymentIds: undefined }, { since: ["Ensure since is not in the future."] }],
    [
      "until past the clock's slack",
      { since: NOW - DAY, until: NOW + CLOCK_SLACK_MS + 1, paymentIds: undefined },
      { until: ["Ensure until is not in the future."] },
    ],
    ["51 payments", { since: NOW - DAY, until: NOW, paymentIds: ids(51) }, { payment_id: ["Ensure this field has no more than 50 elements."] }],
    ["no payment", { since: NOW - DAY, until: NOW, paymentIds: [] }, { payment_id: ["This list may not be empty."] }],
  ])("refuses %s", (_, ask, problem) => {
    expect(replayWindow(ask, NOW)).toEqual({ problem });
  });
});
