import { describe, expect, it } from "vitest";
import { EARLY_SLACK_MS, MOVE_HOLD_SECONDS, sortLeases, type DeliveryRow, type SubscriptionRow } from "../../src/webhooks/delivery/lease";

const NOW = Date.UTC(2026, 10, 22, 12);
const delivery = (id: string, subscriptionId = "sub") => ({ id, subscriptionId }) as DeliveryRow;
const subscription = { id: "sub" } as SubscriptionRow;

describe("sortLeases", () => {
  // [case, leased by the statement, the row's state after it, expected lease]
  const cases: [string, boolean, { status: string; nextAttemptAt: number | null; held?: boolean } | null, unknown][] = [
    ["leased, with its subscription", true, { status: "pending", nextAttemptAt: NOW }, { kind: "leased", subscription }],
    ["succeeded already: never sent twice", false, { status: "succeeded", nextAttemptAt: null }, { kind: "done" }],
    ["failed: dropped", false, { status: "failed", nextAttemptAt: null }, { kind: "done" }],
    ["gone (its subscription was deleted)", false, null, { kind: "done" }],
    ["held by another copy, due now", false, { status: "pending", nextAttemptAt: NOW }, { kind: "done" }],
    ["due within the slack, held elsewhere", false, { status: "pending", nextAttemptAt: NOW + EARLY_SLACK_MS }, { kind: "done" }],
    ["early by a minute: comes back then", false, { status: "pending", nextAttemptAt: NOW + 60_000 }, { kind: "early", delaySeconds: 60 }],
    [
      "early by 30 hours: the queue's longest delay, then again",
      false,
      { status: "pending", nextAttemptAt: NOW + 30 * 3600_000 },
      { kind: "early", delaySeconds: 12 * 3600 },
    ],
    [
      "due, its account at a move's cut-over: comes back shortly",
      false,
      { status: "pending", nextAttemptAt: NOW, held: true },
      { kind: "early", delaySeconds: MOVE_HOLD_SECONDS },
    ],
    ["ended, its account moving: done", false, { status: "succeeded", nextAttemptAt: null, held: true }, { kind: "done" }],
  ];
  it.each(cases)("%s", (_name, leased, state, expected) => {
    const leases = sortLeases(["d1"], leased ? [delivery("d1")] : [], [subscription], state ? [{ id: "d1", ...state }] : [], NOW);
    expect(leases.get("d1")).toMatchObject(expected as object);
  });

  it("leases a delivery whose subscription is gone without one, for the consumer to end", () => {
    const leases = sortLeases(["d1"], [delivery("d1", "deleted")], [], [{ id: "d1", status: "pending", nextAttemptAt: NOW }], NOW);
    expect(leases.get("d1")).toEqual({ kind: "leased", delivery: delivery("d1", "deleted"), subscription: undefined });
  });
});
