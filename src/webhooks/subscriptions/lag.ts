/**
 * The lag a receiver sees: from a change's commit (its delivery's `created`) to the delivery's first
 * 2xx. Each bucket of the subscription's stats (db/schema/webhook-stats.ts) keeps the lags of the
 * deliveries that succeeded in it as counts per bin, the bins growing by LAG_BIN_RATIO, so a window's
 * percentiles read a bounded number of rows whatever its history, and each is within
 * sqrt(LAG_BIN_RATIO) - 1 (under 9%) of the lags it counts, give or take the 1 ms it rounds to. Pure.
 */

/** Each bin's upper bound is this many times its lower. */
export const LAG_BIN_RATIO = 1.18;

/** What `lag_alert_ms` may be: from 100 ms to the 3 days deliveries are retried. */
export const LAG_ALERT_BOUNDS_MS = { min: 100, max: 3 * 24 * 60 * 60 * 1000 } as const;

/** Lag counts per bin, as a bucket keeps them (JSON {bin: count}). */
export type LagBins = Record<string, number>;

/** The bin of a lag: bin b holds (ratio^(b-1), ratio^b] ms; 0 holds 1 ms and less. */
export function lagBin(lagMs: number): number {
  return lagMs <= 1 ? 0 : Math.ceil(Math.log(lagMs) / Math.log(LAG_BIN_RATIO) - 1e-9);
}

/** The lag a bin stands for: the geometric middle of its bounds. */
export function binLag(bin: number): number {
  return bin === 0 ? 1 : Math.round(LAG_BIN_RATIO ** (bin - 0.5));
}

/** Counts one lag in its bin. */
export function countLag(bins: LagBins, lagMs: number): void {
  const bin = String(lagBin(lagMs));
  bins[bin] = (bins[bin] ?? 0) + 1;
}

/** Lags counted per bin. */
export function lagBins(lags: number[]): LagBins {
  const bins: LagBins = {};
  for (const lag of lags) countLag(bins, lag);
  return bins;
}

/** Bins summed. */
export function addBins(...all: LagBins[]): LagBins {
  const sum: LagBins = {};
  for (const bins of all) for (const [bin, count] of Object.entries(bins)) sum[bin] = (sum[bin] ?? 0) + count;
  return sum;
}

/** The lag below which `share` (0 to 1) of the counted lags fall (nearest rank); null when none. */
export function lagPercentile(bins: LagBins, share: number): number | null {
  const sorted = Object.entries(bins)
    .map(([bin, count]) => [Number(bin), count] as const)
    .filter(([, count]) => count > 0)
    .sort((a, b) => a[0] - b[0]);
  const total = sorted.reduce((sum, [, count]) => sum + count, 0);
  if (total === 0) return null;
  const rank = Math.max(1, Math.ceil(share * total));
  let seen = 0;
  for (const [bin, count] of sorted) {
    seen += count;
    if (seen >= rank) return binLag(bin);
  }
  return binLag(sorted.at(-1)![0]);
}

/** The span whose p95 lag is held to `lag_alert_ms`: the latest 5-minute buckets that cover it. */
export const LAG_ALERT_WINDOW_MS = 5 * 60 * 1000;
/** How long the p95 lag stays under the alert before a lagging subscription has caught up. */
export const CAUGHT_UP_AFTER_MS = 5 * 60 * 1000;

export type LagEvent = "subscription.lagging" | "subscription.caught_up";

/** A subscription's lag alert state: since when it lags, and since when it has been under its alert again. */
export interface LagState {
  laggingSince: number | null;
  caughtUpSince: number | null;
}

/**
 * The lag alert's next state and what health subscriptions are told, from the p95 lag now (null:
 * nothing succeeded in the window) and the subscription's alert (null: off, and the state is
 * dropped, nothing told). A subscription lags once its p95 passes the alert; it has caught up once
 * the p95 has stayed at or under it (or nothing was measured) for CAUGHT_UP_AFTER_MS. Pure.
 */
export function lagStep(state: LagState, p95: number | null, alertMs: number | null, now: number): { next: LagState; tell: LagEvent | null } {
  if (alertMs === null) return { next: { laggingSince: null, caughtUpSince: null }, tell: null };
  const over = p95 !== null && p95 > alertMs;
  if (state.laggingSince === null)
    return over ? { next: { laggingSince: now, caughtUpSince: null }, tell: "subscription.lagging" } : { next: state, tell: null };
  if (over) return { next: { laggingSince: state.laggingSince, caughtUpSince: null }, tell: null };
  if (state.caughtUpSince === null) return { next: { laggingSince: state.laggingSince, caughtUpSince: now }, tell: null };
  if (now - state.caughtUpSince >= CAUGHT_UP_AFTER_MS) return { next: { laggingSince: null, caughtUpSince: null }, tell: "subscription.caught_up" };
  return { next: state, tell: null };
}
