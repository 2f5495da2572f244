/**
 * Subscription health (docs/interface.md, "Test delivery", "Recover" and "Stats"): attempts are
 * counted as they are recorded, per subscription and 5-minute bucket, with their durations as
 * counts per bin; a window's stats read its buckets (at most 2,016 rows for 7 days) whatever the
 * subscription's history.
 */
import { and, eq, exists, gte } from "drizzle-orm";
import { runNamedBatch, type Db } from "../../db/client";
import { BUCKET_MS, DURATION_BINS_MS, webhookStats, webhookSubscriptions } from "../../db/schema";
import { ofSubscription } from "./statements";
import { notFound } from "../../errors";
import type { ServiceContext } from "../../context";
import { inFlightOf, SUBSCRIPTION_ROW, waitingOf } from "./rows";
import { addBins, lagPercentile, type LagBins } from "./lag";
import { heldCount } from "./holds";

export const WINDOWS = { "1h": 3600 * 1000, "24h": 24 * 3600 * 1000, "7d": 7 * 24 * 3600 * 1000 } as const;
export type StatsWindow = keyof typeof WINDOWS;

const binKeys = ["h0", "h1", "h2", "h3", "h4", "h5", "h6", "h7", "h8", "h9", "h10"] as const;

/** The subscription's health over `window` (1h, 24h or 7d) up to now: its buckets in the window, and its row. */
export async function subscriptionStats({ db, accountId }: ServiceContext, subscriptionId: string, window: StatsWindow) {
  const now = Date.now();
  const from = now - WINDOWS[window];
  const { found, rows } = await runNamedBatch(db, {
    found: selectHealth(db, accountId, subscriptionId, now),
    rows: selectBuckets(db, accountId, subscriptionId, from),
  });
  const subscription = found[0];
  if (!subscription) throw notFound();
  const { backoffUntil, ...rest } = subscription;
  // The admission rule's state (admission.ts): backed off until a moment still to come, or not.
  return {
    window,
    ...summarise(rows),
    series: series(rows, window, from),
    ...rest,
    backoffUntil: backoffUntil !== null && backoffUntil > now ? backoffUntil : null,
  };
}

/** The step of a window's series: 5 minutes for 1h, an hour for 24h, 6 hours for 7d. */
export const SERIES_STEP_MS: Record<StatsWindow, number> = { "1h": BUCKET_MS, "24h": 3600 * 1000, "7d": 6 * 3600 * 1000 };

/**
 * The window's attempts over time, oldest first: one point per step from the step holding the
 * window's start, each with its counts (zero where nothing was attempted). Pure.
 */
export function series(rows: (typeof webhookStats.$inferSelect)[], window: StatsWindow, from: number) {
  const step = SERIES_STEP_MS[window];
  const first = from - (from % step);
  const points = Array.from({ length: Math.ceil((from + WINDOWS[window] - first) / step) }, (_, i) => ({
    start: first + i * step,
    attempts: 0,
    succeeded: 0,
    failed: 0,
    pending: 0,
    lag: {} as LagBins,
  }));
  for (const row of rows) {
    const point = points[Math.floor((row.bucketStart - first) / step)];
    if (!point) continue;
    point.attempts += row.attempts;
    point.succeeded += row.succeeded;
    point.failed += row.failed;
    point.pending += row.pending;
    point.lag = addBins(point.lag, lagOf(row));
  }
  return points.map(({ lag, ...point }) => ({ ...point, p95_lag_ms: lagPercentile(lag, 0.95) }));
}

/** A bucket's lag counts (its JSON, as stored). */
function lagOf(row: typeof webhookStats.$inferSelect): LagBins {
  return JSON.parse(row.lag || "{}") as LagBins;
}

export interface WindowSummary {
  attempts: number;
  succeeded: number;
  failed: number;
  pending: number;
  success_rate: number | null;
  p50_duration_ms: number | null;
  p95_duration_ms: number | null;
  p50_lag_ms: number | null;
  p95_lag_ms: number | null;
  p99_lag_ms: number | null;
}

/** A window's buckets summed, with its success rate and duration percentiles. Pure. */
export function summarise(rows: (typeof webhookStats.$inferSelect)[]): WindowSummary {
  const bins = DURATION_BINS_MS.map((_, i) => rows.reduce((sum, row) => sum + row[binKeys[i]!], 0));
  const total = (key: "attempts" | "succeeded" | "failed" | "pending") => rows.reduce((sum, row) => sum + row[key], 0);
  const attempts = total("attempts");
  const lag = addBins(...rows.map(lagOf));
  return {
    attempts,
    succeeded: total("succeeded"),
    failed: total("failed"),
    pending: total("pending"),
    success_rate: attempts === 0 ? null : Math.round((total("succeeded") / attempts) * 10000) / 10000,
    p50_duration_ms: percentile(bins, 0.5),
    p95_duration_ms: percentile(bins, 0.95),
    p50_lag_ms: lagPercentile(lag, 0.5),
    p95_lag_ms: lagPercentile(lag, 0.95),
    p99_lag_ms: lagPercentile(lag, 0.99),
  };
}

/**
 * The q-quantile of durations counted per bin, interpolated linearly inside its bin (as
 * Prometheus's histogram_quantile does); null without attempts. Pure.
 */
export function percentile(bins: number[], q: number): number | null {
  const total = bins.reduce((a, b) => a + b, 0);
  if (total === 0) return null;
  const rank = q * total;
  let seen = 0;
  for (let i = 0; i < bins.length; i++) {
    const count = bins[i]!;
    if (count > 0 && seen + count >= rank) {
      const lower = i === 0 ? 0 : DURATION_BINS_MS[i - 1]!;
      const upper = DURATION_BINS_MS[i]!;
      return Math.round(lower + ((upper - lower) * (rank - seen)) / count);
    }
    seen += count;
  }
  return DURATION_BINS_MS.at(-1)!;
}

/** Reads the account's subscription's state as `/stats/` shows it, with its attempts in flight at `now`, held and waiting deliveries. */
export function selectHealth(db: Db, accountId: string, subscriptionId: string, now: number) {
  return db
    .select({
      isActive: webhookSubscriptions.isActive,
      failingSince: webhookSubscriptions.failingSince,
      lastAttemptAt: webhookSubscriptions.lastAttemptAt,
      lastSuccessAt: webhookSubscriptions.lastSuccessAt,
      backoffUntil: webhookSubscriptions.backoffUntil,
      inFlight: inFlightOf(SUBSCRIPTION_ROW, now),
      held: heldCount(SUBSCRIPTION_ROW),
      waitingForOrder: waitingOf(SUBSCRIPTION_ROW),
    })
    .from(webhookSubscriptions)
    .where(ofSubscription(accountId, subscriptionId));
}

/** Reads the account's subscription's stats buckets from the one holding `from` on. */
export function selectBuckets(db: Db, accountId: string, subscriptionId: string, from: number) {
  return db
    .select()
    .from(webhookStats)
    .where(
      and(
        eq(webhookStats.subscriptionId, subscriptionId),
        gte(webhookStats.bucketStart, from - (from % BUCKET_MS)),
        exists(db.select({ id: webhookSubscriptions.id }).from(webhookSubscriptions).where(ofSubscription(accountId, subscriptionId))),
      ),
    );
}
