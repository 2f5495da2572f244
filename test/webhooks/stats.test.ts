import { describe, expect, it } from "vitest";
import { binOf, BUCKET_MS, DURATION_BINS_MS, percentile, statsRows, summarise } from "../../src/webhooks/stats";

describe("binOf", () => {
  it.each([
    [0, 0],
    [10, 0],
    [11, 1],
    [99, 3],
    [100, 3],
    [14_999, 10],
    [15_000, 10],
    [60_000, 10],
  ])("%i ms is in bin %i", (ms, bin) => {
    expect(binOf(ms)).toBe(bin);
  });
});

describe("percentile", () => {
  const bins = (counts: Record<number, number>) => DURATION_BINS_MS.map((_, i) => counts[i] ?? 0);
  it.each([
    ["no attempts", bins({}), 0.5, null],
    ["one attempt under 10 ms", bins({ 0: 1 }), 0.5, 5],
    ["four in 25-50 ms", bins({ 2: 4 }), 0.5, 38],
    ["nine fast, one slow: p50", bins({ 1: 9, 8: 1 }), 0.5, 18],
    ["nine fast, one slow: p95", bins({ 1: 9, 8: 1 }), 0.95, 3750],
    ["all timed out", bins({ 10: 3 }), 0.95, 14750],
  ])("%s: q=%d is %s", (_label, counts, q, expected) => {
    expect(percentile(counts, q)).toBe(expected);
  });
});

describe("statsRows and summarise", () => {
  it("sum attempts per subscription and 5-minute bucket, and a window's rows into its figures", () => {
    const t = 10 * BUCKET_MS;
    const rows = statsRows([
      { subscriptionId: "a", startedAt: t + 1, durationMs: 20, status: "succeeded" },
      { subscriptionId: "a", startedAt: t + BUCKET_MS - 1, durationMs: 400, status: "pending" },
      { subscriptionId: "a", startedAt: t + BUCKET_MS, durationMs: 20_000, status: "failed" },
      { subscriptionId: "b", startedAt: t + 5, durationMs: 5, status: "succeeded" },
    ]);
    expect(rows.map(({ subscriptionId, bucketStart, attempts, succeeded, pending, failed }) => ({ subscriptionId, bucketStart, attempts, succeeded, pending, failed }))).toEqual([
      { subscriptionId: "a", bucketStart: t, attempts: 2, succeeded: 1, pending: 1, failed: 0 },
      { subscriptionId: "a", bucketStart: t + BUCKET_MS, attempts: 1, succeeded: 0, pending: 0, failed: 1 },
      { subscriptionId: "b", bucketStart: t, attempts: 1, succeeded: 1, pending: 0, failed: 0 },
    ]);
    const stored = rows
      .filter((row) => row.subscriptionId === "a")
      .map(({ bins, ...row }) => ({ ...row, ...Object.fromEntries(bins.map((count, i) => [`h${i}`, count])) })) as Parameters<typeof summarise>[0];
    expect(summarise(stored)).toEqual({ attempts: 3, succeeded: 1, failed: 1, pending: 1, success_rate: 0.3333, p50_duration_ms: 375, p95_duration_ms: 14_250 });
  });
});
