import { and, inArray, lt, sql, type SQL } from "drizzle-orm";
import { fixedLimit } from "../../db/fixed-limit";
import { withinBytes } from "../../lib/within-bytes";
import { runNamedBatch, type Db } from "../../db/client";
import { payments, webhookAttempts, webhookDeliveries, webhookStats, webhookSubscriptions } from "../../db/schema";
import { inList } from "../../db/in-list";
import { notHeldByMove } from "../../db/moving";
import { groupBy } from "../../lib/group-by";
import { withAttempts, type Delivery } from "../subscriptions/deliveries";
import { SUBSCRIPTION_ROW } from "../subscriptions/rows";
import { deliveryView } from "../subscriptions/delivery-record";
import { archiveKey, archivePrefix, dayOf } from "../subscriptions/archive";
import { objectCounts } from "../replays/archived";
import { droppedPast } from "../outbox/sequence";
import { isBudgetSpent } from "../../lib/run-budget";

export const DEFAULT_RETENTION_DAYS = 30;
/** Health buckets outlive the log: 90 days of a subscription's history stay in its stats. */
export const STATS_KEEP_DAYS = 90;
/**
 * Deliveries one cron run removes on a shard at most (archiving each first): 14.4 million a day at
 * one run a minute, past what the capacity model says a busy shard writes (docs/performance.md).
 */
export const RETENTION_PER_RUN = 10_000;
/** Deliveries one step reads, archives and removes at most, and the bytes it may read for them. */
export const RETENTION_CHUNK = 1000;
export const RETENTION_CHUNK_BYTES = 8_000_000;
/** D1 queries of one step: its candidates, their rows, their attempts and bodies' sources (work), and the removal (bookkeeping, three statements). */
const STEP_QUERIES = 1 + 1 + 2 + 3;
/**
 * The size of a delivery (as a step counts it, below) up to which a run keeps RETENTION_PER_RUN:
 * a body of 10 KB rebuilt from its payment's detail, its first attempt's headers and answer.
 */
export const RETENTION_SIZED_FOR_BYTES = 24_000;
/**
 * The cron's floor and reserve for retention (lib/run-budget.ts): the steps that remove
 * RETENTION_PER_RUN deliveries of RETENTION_SIZED_FOR_BYTES, and the health buckets' clean-up; the
 * reserve is a step's removal, which follows its archive whatever the budget (an archive written
 * and its deliveries kept would be written again by the next run).
 */
export const RETENTION_STEP = {
  floor: Math.ceil((RETENTION_PER_RUN * RETENTION_SIZED_FOR_BYTES) / RETENTION_CHUNK_BYTES) * STEP_QUERIES + 1,
  reserve: 3,
};
/** An attempt's most bytes as the archive keeps it (its excerpt escaped as JSON, its headers, its error). */
const ATTEMPT_BYTES = 8_000;
const DAY_MS = 86_400_000;
/** What retention removes: deliveries that ended, and those held (docs/interface.md, "Holds"), past RETENTION_DAYS since they last changed. */
const ENDED = ["succeeded", "failed", "held"] as const;

/** RETENTION_DAYS as days: a whole number of at least 1, or the default. Pure. */
export function retentionDays(text: string | undefined): number {
  const days = Number(text);
  return Number.isInteger(days) && days >= 1 ? days : DEFAULT_RETENTION_DAYS;
}

export interface RetentionReport {
  archived: number;
  removed: number;
  statsRemoved: number;
}

/**
 * One cron run's retention on a shard: ended deliveries whose last change is older than `days` are
 * written to the archive (when bound) and then removed with their attempts, step by step, at most
 * RETENTION_PER_RUN a run; health buckets older than STATS_KEEP_DAYS go too. A delivery that
 * changed meanwhile (redelivered) is not removed. Each step writes new archive objects, never
 * reading or rewriting one; archiving before removing, under a name the same deliveries give
 * again, means a run cut short between the two archives nothing twice and loses nothing.
 */
export async function applyRetention(
  db: Db,
  archive: R2Bucket | undefined,
  days: number,
  now: number,
  { max = RETENTION_PER_RUN, bookkeeping = db }: { max?: number; bookkeeping?: Db } = {},
): Promise<RetentionReport> {
  const cutoff = now - days * DAY_MS;
  let archived = 0;
  let removed = 0;
  try {
    while (removed < max) {
      const step = await removeStep(db, archive, cutoff, Math.min(RETENTION_CHUNK, max - removed), bookkeeping);
      archived += step.archived;
      removed += step.removed;
      if (step.removed === 0) break;
    }
    const statsGone = await deleteOldStats(db, now);
    return { archived, removed, statsRemoved: statsGone.length };
  } catch (error) {
    // Stopped by the cron's budget: what it removed is kept, and said.
    if (!isBudgetSpent(error)) throw error;
    return { archived, removed, statsRemoved: 0 };
  }
}

/**
 * One step: the next `limit` removable deliveries at most, as many as RETENTION_CHUNK_BYTES hold
 * with their attempts (one alone however large), archived, then removed.
 */
async function removeStep(db: Db, archive: R2Bucket | undefined, cutoff: number, limit: number, kept: Db): Promise<{ archived: number; removed: number }> {
  // Each subscription's log starts with its oldest deliveries (the table's key, by created). A
  // delivery last changed before the cutoff was also made before it, so a step reads only the
  // front of each log, up to the cutoff, and takes the ended ones not changed since.
  const candidates = await selectRemovable(db, cutoff, limit);
  const ids = candidates
    .slice(
      0,
      withinBytes(
        candidates.map((row) => row.bytes),
        RETENTION_CHUNK_BYTES,
      ),
    )
    .map((row) => row.id);
  if (ids.length === 0) return { archived: 0, removed: 0 };
  const d = webhookDeliveries;
  const rows = await db.select().from(d).where(inList(d.id, ids));
  const deliveries = await withAttempts(db, rows, Infinity);
  const archived = archive ? await archiveAll(archive, deliveries) : 0;
  const stillOld = and(inList(d.id, ids), inArray(d.status, [...ENDED]), lt(d.updatedAt, cutoff))!;
  // Once archived, the removal is bookkeeping (`kept`): it runs whatever the budget left.
  const { gone } = await runNamedBatch(kept, {
    sequences: sequencesPastRemoved(kept, stillOld),
    attempts: deleteRemovedAttempts(kept, stillOld),
    gone: deleteRemoved(kept, stillOld),
  });
  return { archived, removed: gone.length };
}

/** Deletes health buckets older than STATS_KEEP_DAYS, RETENTION_CHUNK * 5 at most (none of an account a move holds); returns them. */
export function deleteOldStats(db: Db, now: number) {
  const oldStats = db
    .select({ rowid: sql`rowid` })
    .from(webhookStats)
    .where(
      and(
        lt(webhookStats.bucketStart, now - STATS_KEEP_DAYS * DAY_MS),
        notHeldByMove(sql`(select s.account_id from webhook_subscriptions s where s.id = ${webhookStats.subscriptionId})`),
      ),
    )
    .limit(fixedLimit(RETENTION_CHUNK * 5));
  return db
    .delete(webhookStats)
    .where(sql`rowid in ${oldStats}`)
    .returning({ at: webhookStats.bucketStart });
}

/** Reads the next `limit` removable deliveries at most, with the bytes a step counts for each. */
export function selectRemovable(db: Db, cutoff: number, limit: number) {
  const d = webhookDeliveries;
  return db
    .select({
      id: d.id,
      // Its body as stored, or twice its payment's detail when its body is rebuilt from it (the
      // detail read, the body made); its first attempt's answer as the archive escapes it, and its
      // headers; each later attempt at its most.
      bytes: sql<number>`coalesce(length(cast(${d.body} as blob)), 0)
        + case when ${d.flags} is null then 0 else 2 * coalesce((select length(cast(${payments.detail} as blob)) from ${payments} where ${payments.id} = ${d.paymentId}), 0) end
        + coalesce(length(cast(json_quote(${d.firstResponseExcerpt}) as blob)), 0) + coalesce(length(cast(${d.firstHeaders} as blob)) * 2, 0)
        + max(${d.attempts} - 1, 0) * ${ATTEMPT_BYTES} + 1000`,
    })
    .from(d)
    .where(
      and(
        inArray(d.subscriptionId, db.select({ id: webhookSubscriptions.id }).from(webhookSubscriptions)),
        lt(d.createdAt, cutoff),
        inArray(d.status, [...ENDED]),
        lt(d.updatedAt, cutoff),
        notHeldByMove(d.accountId),
      ),
    )
    .limit(fixedLimit(limit));
}

/**
 * Moves the sequences of the subscriptions whose deliveries `stillOld` names on past them
 * (outbox/sequence.ts), even when nothing of them is kept: a feed cursor before them has expired.
 */
export function sequencesPastRemoved(db: Db, stillOld: SQL) {
  const d = webhookDeliveries;
  const removedMax = (column: "sequence" | "created_at") =>
    sql`coalesce((select max(${sql.raw(column)}) from ${d} where ${stillOld} and ${d.subscriptionId} = ${SUBSCRIPTION_ROW}), 0)`;
  return db
    .update(webhookSubscriptions)
    .set({
      lastRemovedSequence: sql`max(${webhookSubscriptions.lastRemovedSequence}, ${removedMax("sequence")})`,
      ...droppedPast(removedMax),
    })
    .where(inArray(webhookSubscriptions.id, db.select({ id: d.subscriptionId }).from(d).where(stillOld)));
}

/** Deletes the attempts of the deliveries `stillOld` names (before the deliveries they point at). */
export function deleteRemovedAttempts(db: Db, stillOld: SQL) {
  return db.delete(webhookAttempts).where(sql`${webhookAttempts.deliveryId} in (select ${webhookDeliveries.id} from ${webhookDeliveries} where ${stillOld})`);
}

/** Deletes the deliveries `stillOld` names; returns their ids. */
export function deleteRemoved(db: Db, stillOld: SQL) {
  return db.delete(webhookDeliveries).where(stillOld).returning({ id: webhookDeliveries.id });
}

/** Writes each subscription's deliveries of each day in a new object; returns how many were written. */
async function archiveAll(archive: R2Bucket, deliveries: Delivery[]): Promise<number> {
  const inLog = [...deliveries].sort((a, b) => a.delivery.createdAt - b.delivery.createdAt || a.delivery.id.localeCompare(b.delivery.id));
  const files = groupBy(inLog, ({ delivery }) => archivePrefix(delivery.accountId, delivery.subscriptionId, dayOf(delivery.createdAt)));
  for (const group of files.values()) {
    const { delivery: first } = group[0]!;
    const records = group.map((delivery) => JSON.stringify({ subscription_id: delivery.delivery.subscriptionId, ...deliveryView(delivery) }));
    await archive.put(archiveKey(first.accountId, first.subscriptionId, dayOf(first.createdAt), first.id), await gzip(`${records.join("\n")}\n`), {
      httpMetadata: { contentType: "application/gzip" },
      // What a replay's count reads without opening the object (replays/archived.ts).
      customMetadata: objectCounts(group.map(({ delivery }) => delivery)),
    });
  }
  return deliveries.length;
}

async function gzip(text: string): Promise<ArrayBuffer> {
  return new Response(new Blob([text]).stream().pipeThrough(new CompressionStream("gzip"))).arrayBuffer();
}
