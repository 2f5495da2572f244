import { describe, expect, it } from "vitest";
import { percentile, series, summarise } from "../../src/webhooks/subscriptions/stats";
import { binOf, statsRows } from "../../src/webhooks/delivery/stats";
import { BUCKET_MS, DURATION_BINS_MS } from "../../src/db/schema";

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
    expect(
      rows.map(({ subscriptionId, bucketStart, attempts, succeeded, pending, failed }) => ({
        subscriptionId,
        bucketStart,
        attempts,
        succeeded,
        pending,
        failed,
      })),
    ).toEqual([
      { subscriptionId: "a", bucketStart: t, attempts: 2, succeeded: 1, pending: 1, failed: 0 },
      { subscriptionId: "a", bucketStart: t + BUCKET_MS, attempts: 1, succeeded: 0, pending: 0, failed: 1 },
      { subscriptionId: "b", bucketStart: t, attempts: 1, succeeded: 1, pending: 0, failed: 0 },
    ]);
    const stored = rows
      .filter((row) => row.subscriptionId === "a")
      .map(({ bins, lag, ...row }) => ({ ...row, lag: JSON.stringify(lag), ...Object.fromEntries(bins.map((count, i) => [`h${i}`, count])) })) as Parameters<
      typeof summarise
    >[0];
    expect(summarise(stored)).toEqual({
      attempts: 3,
      succeeded: 1,
      failed: 1,
      pending: 1,
      success_rate: 0.3333,
      p50_duration_ms: 375,
      p95_duration_ms: 14_250,
      p50_lag_ms: null,
      p95_lag_ms: null,
      p99_lag_ms: null,
    });
  });
});

describe("series", () => {
  const hour = 3_600_000;
  const row = (bucketStart: number, attempts: number) => ({
    subscriptionId: "a",
    bucketStart,
    attempts,
    succeeded: attempts,
    failed: 0,
    pending: 0,
    h0: 0,
    h1: 0,
    h2: 0,
    h3: 0,
    h4: 0,
    h5: 0,
    h6: 0,
    h7: 0,
    h8: 0,
    h9: 0,
    h10: 0,
    lag: "{}",
  });
  it("puts a 24h window's buckets into hourly points from the hour its start falls in, zeros included", () => {
    const from = 100 * hour + 20 * 60_000; // 20 minutes past an hour
    const points = series(
      [row(100 * hour + 15 * 60_000, 2), row(100 * hour + 50 * 60_000, 3), row(110 * hour, 7), row(124 * hour + 10 * 60_000, 1)],
      "24h",
      from,
    );
    expect(points).toHaveLength(25);
    expect(points[0]).toEqual({ start: 100 * hour, attempts: 5, succeeded: 5, failed: 0, pending: 0, p95_lag_ms: null });
    expect(points[10]!.attempts).toBe(7);
    expect(points[24]).toEqual({ start: 124 * hour, attempts: 1, succeeded: 1, failed: 0, pending: 0, p95_lag_ms: null });
    expect(points.reduce((sum, point) => sum + point.attempts, 0)).toBe(13);
  });
  it.each([
    ["1h", 12, 13],
    ["7d", 28, 29],
  ] as const)("a %s window has %i to %i points", (window, min, max) => {
    const points = series([], window, Date.UTC(2026, 10, 22, 10, 7));
    expect(points.length).toBeGreaterThanOrEqual(min);
    expect(points.length).toBeLessThanOrEqual(max);
  });
});
