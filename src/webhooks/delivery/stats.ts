/**
 * The writer of the subscriptions' health buckets (db/schema/webhook-stats.ts): each batch of
 * recorded attempts adds to its subscriptions' 5-minute buckets, in the batch that records them
 * (record.ts). The reader is webhooks/subscriptions/stats.ts.
 */
import { eq, sql, type SQL } from "drizzle-orm";
import type { BatchStatement, Db } from "../../db/client";
import { BUCKET_MS, DURATION_BINS_MS, webhookStats, webhookSubscriptions } from "../../db/schema";
import { countLag, type LagBins } from "../subscriptions/lag";

/** One recorded attempt, as the stats count it. */
export interface CountedAttempt {
  subscriptionId: string;
  startedAt: number;
  durationMs: number;
  /** The state the attempt left its delivery in. */
  status: "succeeded" | "pending" | "failed";
  /** For its delivery's first 2xx, the lag (ms) from the change's commit; else null. */
  lagMs?: number | null;
}

export interface StatsRow {
  subscriptionId: string;
  bucketStart: number;
  attempts: number;
  succeeded: number;
  failed: number;
  pending: number;
  bins: number[];
  /** The lags of the deliveries that succeeded in the bucket (lag.ts). */
  lag: LagBins;
}

/** The bin of a duration. Pure. */
export function binOf(durationMs: number): number {
  const index = DURATION_BINS_MS.findIndex((bound) => durationMs <= bound);
  return index === -1 ? DURATION_BINS_MS.length - 1 : index;
}

/** Attempts summed per subscription and bucket. Pure. */
export function statsRows(attempts: CountedAttempt[]): StatsRow[] {
  const rows = new Map<string, StatsRow>();
  for (const attempt of attempts) {
    const bucketStart = attempt.startedAt - (attempt.startedAt % BUCKET_MS);
    const key = `${attempt.subscriptionId} ${bucketStart}`;
    let row = rows.get(key);
    if (!row) {
      row = {
        subscriptionId: attempt.subscriptionId,
        bucketStart,
        attempts: 0,
        succeeded: 0,
        failed: 0,
        pending: 0,
        bins: DURATION_BINS_MS.map(() => 0),
        lag: {},
      };
      rows.set(key, row);
    }
    row.attempts++;
    row[attempt.status]++;
    row.bins[binOf(attempt.durationMs)]!++;
    if (attempt.lagMs !== undefined && attempt.lagMs !== null) countLag(row.lag, attempt.lagMs);
  }
  return [...rows.values()];
}

const binColumns = [
  webhookStats.h0,
  webhookStats.h1,
  webhookStats.h2,
  webhookStats.h3,
  webhookStats.h4,
  webhookStats.h5,
  webhookStats.h6,
  webhookStats.h7,
  webhookStats.h8,
  webhookStats.h9,
  webhookStats.h10,
];
const binKeys = ["h0", "h1", "h2", "h3", "h4", "h5", "h6", "h7", "h8", "h9", "h10"] as const;

/**
 * The statements that add `rows` to the stored buckets, each only while its subscription exists:
 * an attempt recorded after its subscription was deleted leaves no bucket behind.
 */
export function statsStatements(db: Db, rows: StatsRow[]): BatchStatement[] {
  const added = (column: { name: string }) => sql`${sql.identifier(column.name)} + excluded.${sql.identifier(column.name)}`;
  return rows.map((row) =>
    db
      .insert(webhookStats)
      .select(
        (qb) =>
          qb
            .select({
              subscriptionId: webhookSubscriptions.id,
              bucketStart: sql`${row.bucketStart}`.as("bucket_start"),
              attempts: sql`${row.attempts}`.as("attempts"),
              succeeded: sql`${row.succeeded}`.as("succeeded"),
              failed: sql`${row.failed}`.as("failed"),
              pending: sql`${row.pending}`.as("pending"),
              ...Object.fromEntries(binKeys.map((key, i) => [key, sql`${row.bins[i]!}`.as(key)])),
              lag: sql`${JSON.stringify(row.lag)}`.as("lag"),
            } as unknown as Record<keyof typeof webhookStats.$inferInsert, SQL.Aliased>)
            .from(webhookSubscriptions)
            .where(eq(webhookSubscriptions.id, row.subscriptionId)) as never,
      )
      .onConflictDoUpdate({
        target: [webhookStats.subscriptionId, webhookStats.bucketStart],
        set: {
          ...Object.fromEntries(
            [webhookStats.attempts, webhookStats.succeeded, webhookStats.failed, webhookStats.pending, ...binColumns].map((column) => [
              tsKey(column.name),
              added(column),
            ]),
          ),
          // The two lag counts summed, bin by bin.
          lag: sql`(select coalesce(json_group_object(bin, n), '{}') from (select key as bin, sum(value) as n from (select key, value from json_each(${webhookStats.lag}) union all select key, value from json_each(excluded.lag)) group by key))`,
        },
      }),
  );
}

const tsKey = (name: string) => name.replace(/_([a-z])/g, (_, ch: string) => ch.toUpperCase());
