/**
 * The lag alert (docs/interface.md, "Lag"): a `subscription.health` subscription is told
 * `subscription.lagging` when another subscription's p95 lag over the latest 5 minutes passes its
 * `lag_alert_ms`, and `subscription.caught_up` once it has stayed under for 5 minutes; once per
 * occurrence. The decision is the pure `lagStep` (subscriptions/lag.ts); here are its reads and
 * writes:
 *
 * - the batch that records attempts reads, after adding them to the stats, the lag state and the
 *   latest buckets' lags of each subscription it saw succeed (`lagReads`: one statement, at most
 *   two bucket rows a subscription);
 * - the cron reads the subscriptions that lag now, on their partial index (`laggingNow`), so one
 *   whose deliveries stopped still catches up;
 * - a change of state is a guarded update (the state as it was read) followed by the event's rows
 *   under `changes() = 1`, in one batch that only a transition costs (`applyLagSteps`): two
 *   recorders or a recorder and the cron never tell it twice.
 */
import { and, eq, inArray, isNotNull, sql } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import { runBatch, type BatchStatement, type Db } from "../../db/client";
import { BUCKET_MS, webhookStats, webhookSubscriptions } from "../../db/schema";
import { handOver } from "../outbox/outbox";
import type { ShardQueue } from "../outbox/message";
import { addBins, LAG_ALERT_WINDOW_MS, lagPercentile, lagStep, type LagBins } from "../subscriptions/lag";
import { healthDeliveries, toldPending } from "./health";

/** Lagging subscriptions the cron looks at in a run on a shard, at most. */
export const LAGGING_AT_ONCE = 100;

/** What a lag step reads of a subscription. */
export interface LagRead {
  id: string;
  accountId: string;
  lagAlertMs: number | null;
  laggingSince: number | null;
  caughtUpSince: number | null;
  /** The lags of its buckets covering the window, each as stored (JSON). */
  lags: string;
}

/** The buckets that cover the latest LAG_ALERT_WINDOW_MS at `now`. */
function windowStart(now: number): number {
  const from = now - LAG_ALERT_WINDOW_MS;
  return from - (from % BUCKET_MS);
}

function readColumns(now: number) {
  const s = webhookSubscriptions;
  return {
    id: s.id,
    accountId: s.accountId,
    lagAlertMs: s.lagAlertMs,
    laggingSince: s.laggingSince,
    caughtUpSince: s.caughtUpSince,
    lags: sql<string>`(select coalesce(json_group_array(json(${webhookStats.lag})), '[]') from ${webhookStats} where ${webhookStats.subscriptionId} = ${s.id} and ${webhookStats.bucketStart} >= ${windowStart(now)})`,
  };
}

/** For the record batch: the lag reads of the subscriptions given that have an alert or lag now. */
export function lagReads(db: Db, subscriptionIds: string[], now: number) {
  const s = webhookSubscriptions;
  return db
    .select(readColumns(now))
    .from(s)
    .where(and(inArray(s.id, subscriptionIds), sql`(${s.lagAlertMs} is not null or ${s.laggingSince} is not null)`));
}

/** For the cron: the subscriptions that lag now, oldest lag first, `most` at most. */
export function laggingNow(db: Db, now: number, most: number) {
  const s = webhookSubscriptions;
  return db.select(readColumns(now)).from(s).where(isNotNull(s.laggingSince)).orderBy(s.laggingSince).limit(most);
}

/**
 * The cron's job: the lag step of the subscriptions that lag now (LAGGING_AT_ONCE, or as many as
 * `queries` more D1 queries allow: one read, then at most two statements each), so that one whose
 * deliveries stopped catches up too.
 */
export async function settleLagging(db: Db, queue: ShardQueue, now: number, queries = Infinity): Promise<{ looked: number; changed: number }> {
  const most = Math.min(LAGGING_AT_ONCE, Math.floor((queries - 1) / 2));
  if (most < 1) return { looked: 0, changed: 0 };
  const reads = await laggingNow(db, now, most);
  return { looked: reads.length, changed: await applyLagSteps(db, queue, reads, now) };
}

/** The p95 lag of a read's buckets; null when nothing succeeded in them. Pure. */
export function p95Of(read: Pick<LagRead, "lags">): number | null {
  const buckets = JSON.parse(read.lags) as LagBins[];
  return lagPercentile(addBins(...buckets), 0.95);
}

/**
 * Takes each read's lag step: a changed state is written only where the state is still as it was
 * read, and an event is told only by the statement that wrote it. Hands the events to the queue.
 * Returns how many states changed hands (0 costs no round trip).
 */
export async function applyLagSteps(db: Db, queue: ShardQueue, reads: LagRead[], now: number): Promise<number> {
  const s = webhookSubscriptions;
  const was = (column: SQLiteColumn, value: number | null) => (value === null ? sql`${column} is null` : sql`${column} = ${value}`);
  const statements: BatchStatement[] = [];
  for (const read of reads) {
    const p95 = p95Of(read);
    const { next, tell } = lagStep(read, p95, read.lagAlertMs, now);
    if (next.laggingSince === read.laggingSince && next.caughtUpSince === read.caughtUpSince) continue;
    statements.push(
      db
        .update(s)
        .set(next)
        .where(and(eq(s.id, read.id), was(s.laggingSince, read.laggingSince), was(s.caughtUpSince, read.caughtUpSince))),
    );
    if (tell) {
      const detail = { p95_lag_ms: p95, lag_alert_ms: read.lagAlertMs };
      statements.push(healthDeliveries(db, read.accountId, { event: tell, subscriptionId: read.id, at: now, detail }, sql`changes() = 1`, now));
    }
  }
  if (statements.length === 0) return 0;
  await handOver(db, queue, toldPending(await runBatch(db, statements)));
  return statements.length;
}
