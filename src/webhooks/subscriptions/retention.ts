import { and, inArray, lt, sql } from "drizzle-orm";
import { fixedLimit } from "../../db/fixed-limit";
import type { Db } from "../../db/client";
import { webhookAttempts, webhookDeliveries, webhookStats, webhookSubscriptions } from "../../db/schema";
import { inList } from "../../db/in-list";
import { notHeldByMove } from "../../db/moving";
import { groupBy } from "../../lib/group-by";
import type { ServiceContext } from "../../context";
import { notFound } from "../../errors";
import { requireSubscription, withAttempts, type Delivery } from "./deliveries";
import { SUBSCRIPTION_ROW } from "./rows";
import { deliveryView } from "./delivery-record";
import { droppedPast } from "../outbox/sequence";

export const DEFAULT_RETENTION_DAYS = 30;
/** Health buckets outlive the log: 90 days of a subscription's history stay in its stats. */
export const STATS_KEEP_DAYS = 90;
/** Deliveries one cron run removes at most: the run stays short however much is due. */
export const RETENTION_CHUNK = 200;
const DAY_MS = 86_400_000;
/** What retention removes: deliveries that ended, and those held (contract 11.2), past RETENTION_DAYS since they last changed. */
const ENDED = ["succeeded", "failed", "held"] as const;

/** RETENTION_DAYS as days: a whole number of at least 1, or the default. Pure. */
export function retentionDays(text: string | undefined): number {
  const days = Number(text);
  return Number.isInteger(days) && days >= 1 ? days : DEFAULT_RETENTION_DAYS;
}

/** The UTC day (YYYY-MM-DD) of an instant. Pure. */
export const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** Where a subscription's archived deliveries of one day are, in the ARCHIVE bucket. Pure. */
export const archiveKey = (accountId: string, subscriptionId: string, day: string) => `deliveries/${accountId}/${subscriptionId}/${day}.ndjson.gz`;

export interface RetentionReport {
  archived: number;
  removed: number;
  statsRemoved: number;
}

/**
 * One cron run's retention: ended deliveries whose last change is older than `days` are written to
 * the archive (when bound) and then removed with their attempts, at most RETENTION_CHUNK a run;
 * health buckets older than STATS_KEEP_DAYS go too. A delivery that changed meanwhile (redelivered)
 * is not removed. Archiving before removing, and skipping lines already archived, means a run cut
 * short between the two archives nothing twice and loses nothing.
 */
export async function applyRetention(db: Db, archive: R2Bucket | undefined, days: number, now: number): Promise<RetentionReport> {
  const cutoff = now - days * DAY_MS;
  // Each subscription's log starts with its oldest deliveries (the table's key, by created). A
  // delivery last changed before the cutoff was also made before it, so a run reads only the front
  // of each log, up to the cutoff, and takes the ended ones not changed since: at most
  // RETENTION_CHUNK of them.
  const d = webhookDeliveries;
  const rows = await db
    .select()
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
    .limit(fixedLimit(RETENTION_CHUNK));
  const deliveries = await withAttempts(db, rows);
  const archived = archive ? await archiveAll(archive, deliveries) : 0;
  let removed = 0;
  if (rows.length > 0) {
    const ids = rows.map((row) => row.id);
    const stillOld = and(inList(webhookDeliveries.id, ids), inArray(webhookDeliveries.status, [...ENDED]), lt(webhookDeliveries.updatedAt, cutoff));
    const removedMax = (column: "sequence" | "created_at") =>
      sql`coalesce((select max(${sql.raw(column)}) from ${d} where ${stillOld} and ${d.subscriptionId} = ${SUBSCRIPTION_ROW}), 0)`;
    const [, , gone] = await db.batch([
      // The subscriptions' sequences go on past what is removed (outbox/sequence.ts), even when
      // nothing of them is kept; a feed cursor before it has expired.
      db
        .update(webhookSubscriptions)
        .set({
          lastRemovedSequence: sql`max(${webhookSubscriptions.lastRemovedSequence}, ${removedMax("sequence")})`,
          ...droppedPast(removedMax),
        })
        .where(inArray(webhookSubscriptions.id, db.select({ id: d.subscriptionId }).from(d).where(stillOld))),
      db.delete(webhookAttempts).where(sql`${webhookAttempts.deliveryId} in (select ${webhookDeliveries.id} from ${webhookDeliveries} where ${stillOld})`),
      db.delete(webhookDeliveries).where(stillOld).returning({ id: webhookDeliveries.id }),
    ]);
    removed = gone.length;
  }
  const oldStats = db.select({ rowid: sql`rowid` }).from(webhookStats).where(and(lt(webhookStats.bucketStart, now - STATS_KEEP_DAYS * DAY_MS), notHeldByMove(sql`(select s.account_id from webhook_subscriptions s where s.id = ${webhookStats.subscriptionId})`))).limit(fixedLimit(RETENTION_CHUNK * 5));
  const statsGone = await db.delete(webhookStats).where(sql`rowid in ${oldStats}`).returning({ at: webhookStats.bucketStart });
  return { archived, removed, statsRemoved: statsGone.length };
}

/** Appends each delivery to its subscription's file for the day it was made; returns how many were new there. */
async function archiveAll(archive: R2Bucket, deliveries: Delivery[]): Promise<number> {
  const files = groupBy(deliveries, ({ delivery }) => archiveKey(delivery.accountId, delivery.subscriptionId, dayOf(delivery.createdAt)));
  let added = 0;
  for (const [key, group] of files) {
    const existing = await archive.get(key);
    const lines = existing ? (await gunzip(await existing.arrayBuffer())).split("\n").filter(Boolean) : [];
    const there = new Set(lines.map((line) => (JSON.parse(line) as { id: string }).id));
    const fresh = group.filter(({ delivery }) => !there.has(delivery.id));
    if (fresh.length === 0) continue;
    const records = fresh.map((delivery) => JSON.stringify({ subscription_id: delivery.delivery.subscriptionId, ...deliveryView(delivery) }));
    await archive.put(key, await gzip(`${[...lines, ...records].join("\n")}\n`), {
      httpMetadata: { contentType: "application/gzip" },
    });
    added += fresh.length;
  }
  return added;
}

async function gzip(text: string): Promise<ArrayBuffer> {
  return new Response(new Blob([text]).stream().pipeThrough(new CompressionStream("gzip"))).arrayBuffer();
}

async function gunzip(bytes: ArrayBuffer): Promise<string> {
  return new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"))).text();
}

/** The account's subscription's archived deliveries of one day (gzip NDJSON): 404 when there are none. */
export async function archivedDay({ db, accountId, archive }: ServiceContext, subscriptionId: string, day: string): Promise<R2ObjectBody> {
  await requireSubscription(db, accountId, subscriptionId);
  const file = archive ? await archive.get(archiveKey(accountId, subscriptionId, day)) : null;
  if (!file) throw notFound();
  return file;
}
