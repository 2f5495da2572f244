/** The statements of a replay (replays.ts, steps.ts), each named for what it does. */
import { and, count, eq, gte, lte, sql, type SQL } from "drizzle-orm";
import type { Db } from "../../db/client";
import { fixedLimit } from "../../db/fixed-limit";
import { equalsLiteral } from "../../db/literal";
import { guardedInsert } from "../../db/guarded-insert";
import { aliased } from "../../db/aliased";
import { webhookDeliveries, webhookReplayItems, webhookReplays, type ReplayPhase, type ReplayStatus } from "../../db/schema";
import { inWindowSql, type ReplayWindow } from "./replayable";

export type ReplayRow = typeof webhookReplays.$inferSelect;
export type ReplayItem = typeof webhookReplayItems.$inferInsert;

/** Counts the log's deliveries a replay of the window sends. */
export function countInLog(db: Db, window: ReplayWindow) {
  return db.select({ n: count() }).from(webhookDeliveries).where(inWindowSql(window));
}

/** Inserts a replay's record. */
export function insertReplay(db: Db, row: typeof webhookReplays.$inferInsert) {
  return db.insert(webhookReplays).values(row).returning();
}

/** Reads one of the account's subscription's replays. */
export function selectReplay(db: Db, accountId: string, subscriptionId: string, replayId: string) {
  const r = webhookReplays;
  return db
    .select()
    .from(r)
    .where(and(eq(r.id, replayId), eq(r.accountId, accountId), eq(r.subscriptionId, subscriptionId)));
}

/** Reads a replay by its id (a step's message names it; the account is the row's). */
export function selectReplayById(db: Db, replayId: string) {
  return db.select().from(webhookReplays).where(eq(webhookReplays.id, replayId));
}

/** Marks as moved on now, and returns, the running replays (`limit` at most) no step has moved on since `before`: those whose step message was lost. */
export function takeStalledReplays(db: Db, before: number, now: number, limit: number) {
  const r = webhookReplays;
  const stalled = db
    .select({ id: r.id })
    .from(r)
    .where(and(sql`${r.status} = 'running'`, sql`${r.updatedAt} < ${before}`))
    .orderBy(r.updatedAt)
    .limit(fixedLimit(limit));
  return db
    .update(r)
    .set({ updatedAt: now })
    .where(sql`${r.id} in ${stalled}`)
    .returning({ id: r.id });
}

/** Sets a replay's state after a step of phase `at`: only while it runs in that phase (a cancel, or a copy of the step that went on first, stands). */
export function updateReplay(
  db: Db,
  replayId: string,
  at: ReplayPhase,
  changes: Partial<Pick<ReplayRow, "phase" | "logCreated" | "logId" | "archiveKey" | "count" | "status">> & { updatedAt: number },
) {
  const r = webhookReplays;
  return db
    .update(r)
    .set(changes)
    .where(and(eq(r.id, replayId), equalsLiteral(r.status, "running"), eq(r.phase, at)))
    .returning({ id: r.id });
}

/** Marks a replay done, its count what it sent: only while it runs and has sent no more since `replay` was read. */
export function finishReplay(db: Db, replay: ReplayRow, now: number) {
  const r = webhookReplays;
  return db
    .update(r)
    .set({ status: "done" satisfies ReplayStatus, count: replay.sent, updatedAt: now })
    .where(and(eq(r.id, replay.id), equalsLiteral(r.status, "running"), eq(r.sentSequence, replay.sentSequence)));
}

/** Cancels one of the account's subscription's replays while it runs; returns it as it is after. */
export function cancelReplayRow(db: Db, accountId: string, subscriptionId: string, replayId: string, now: number) {
  const r = webhookReplays;
  return db
    .update(r)
    .set({ status: "canceled" satisfies ReplayStatus, updatedAt: now })
    .where(and(eq(r.id, replayId), eq(r.accountId, accountId), eq(r.subscriptionId, subscriptionId), equalsLiteral(r.status, "running")))
    .returning();
}

/** Ends, unattempted, a canceled replay's deliveries handed to the queue and not yet attempted (after cancelReplayRow in its batch): it sends nothing more. */
export function endUnattempted(db: Db, replayId: string, now: number) {
  const d = webhookDeliveries;
  const canceled = sql`exists (select 1 from ${webhookReplays} where ${webhookReplays.id} = ${replayId} and ${webhookReplays.status} = 'canceled')`;
  return db
    .update(d)
    .set({ status: "failed", nextAttemptAt: null, updatedAt: now })
    .where(
      and(eq(d.replayId, replayId), sql`${d.status} = 'pending'`, eq(d.attempts, 0), sql`(${d.leasedUntil} is null or ${d.leasedUntil} < ${now})`, canceled),
    );
}

/** Reads the next log rows of the window after the replay's cursor (the log's order: created, then id), `limit` at most, with their stored bodies' bytes. */
export function selectLogKeys(db: Db, replay: ReplayRow, limit: number) {
  const d = webhookDeliveries;
  return db
    .select({ createdAt: d.createdAt, id: d.id, bytes: sql<number>`length(cast(${d.body} as blob))` })
    .from(d)
    .where(and(eq(d.subscriptionId, replay.subscriptionId), gte(d.createdAt, replay.since), lte(d.createdAt, replay.until), afterCursor(replay)))
    .orderBy(d.createdAt, d.id)
    .limit(fixedLimit(limit));
}

/** Rows past the replay's log cursor, as SQL (every row when it has none yet). */
function afterCursor(replay: ReplayRow): SQL | undefined {
  const d = webhookDeliveries;
  return replay.logCreated === null ? undefined : sql`(${d.createdAt}, ${d.id}) > (${replay.logCreated}, ${replay.logId})`;
}

/** Copies the log's rows a replay sends, from past its cursor up to `through` (a row's created and id), into its items; one already there is kept. */
export function copyFromLog(db: Db, replay: ReplayRow, window: ReplayWindow, through: { createdAt: number; id: string }) {
  const d = webhookDeliveries;
  const upTo = sql`(${d.createdAt}, ${d.id}) <= (${through.createdAt}, ${through.id})`;
  return guardedInsert(
    db,
    webhookReplayItems,
    {
      replayId: replay.id,
      sequence: sql`${d.sequence}`,
      deliveryId: sql`${d.id}`,
      paymentId: sql`${d.paymentId}`,
      eventId: sql`${d.eventId}`,
      paymentVersion: sql`${d.paymentVersion}`,
      event: sql`${d.event}`,
      body: sql`${d.body}`,
      flags: sql`${d.flags}`,
      contentType: sql`${d.contentType}`,
      createdAt: sql`${d.createdAt}`,
    },
    and(inWindowSql(window), afterCursor(replay), upTo)!,
    sql`${d}`,
  ).onConflictDoNothing();
}

/** Copies archived records (their values, a JSON array) into a replay's items; one already there is kept. */
export function copyArchived(db: Db, replayId: string, items: Omit<ReplayItem, "replayId">[]) {
  const field = (name: keyof Omit<ReplayItem, "replayId">) => sql.raw(`json_extract(value, '$.${name}')`);
  return guardedInsert(
    db,
    webhookReplayItems,
    {
      replayId,
      sequence: field("sequence"),
      deliveryId: field("deliveryId"),
      paymentId: field("paymentId"),
      eventId: field("eventId"),
      paymentVersion: field("paymentVersion"),
      event: field("event"),
      body: field("body"),
      flags: field("flags"),
      contentType: field("contentType"),
      createdAt: field("createdAt"),
    },
    sql`1`,
    sql`json_each(${JSON.stringify(items)})`,
  ).onConflictDoNothing();
}

/** Reads one of the replay's deliveries whose first attempt has not ended (not yet made, or under way), if any: the next ones wait for it. */
export function selectFirstAttemptOpen(db: Db, replayId: string) {
  const d = webhookDeliveries;
  return db
    .select({ id: d.id })
    .from(d)
    .where(and(eq(d.replayId, replayId), sql`${d.status} = 'pending'`, sql`(${d.attempts} = 0 or ${d.firstEnded} = 0)`))
    .limit(1);
}

/** A new delivery id in SQL: a version 4 UUID, as the service's others are. */
const NEW_ID = sql.raw(
  `lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-' || substr('89ab', 1 + (random() & 3), 1) || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6)))`,
);

/**
 * Makes deliveries of the replay's next `limit` items in sequence order, handed to the queue at
 * `now`: pending, due, numbered and dated one millisecond apart in that order (the log's, and the
 * consumer's start order), each naming the original it sends again. Returns their ids.
 */
export function sendNextItems(db: Db, replay: ReplayRow, limit: number, now: number) {
  const i = aliased(webhookReplayItems, "item");
  const next = sql`${nextItems(replay.id, replay.sentSequence, limit)} "item"`;
  const at = sql`${now} + row_number() over (order by ${i.sequence}) - 1`;
  return guardedInsert(
    db,
    webhookDeliveries,
    {
      id: NEW_ID,
      subscriptionId: replay.subscriptionId,
      accountId: replay.accountId,
      paymentId: sql`${i.paymentId}`,
      eventId: sql`${i.eventId}`,
      body: sql`${i.body}`,
      flags: sql`${i.flags}`,
      contentType: sql`${i.contentType}`,
      status: "pending",
      attempts: 0,
      nextAttemptAt: at,
      scheduleStartedAt: null,
      scheduleFirstAttempt: null,
      enqueuedAt: at,
      leasedUntil: null,
      leaseToken: null,
      sequence: null,
      paymentVersion: sql`${i.paymentVersion}`,
      test: false,
      createdAt: at,
      updatedAt: now,
      event: sql`${i.event}`,
      ordered: false,
      replayId: replay.id,
      replayOf: sql`${i.deliveryId}`,
      replaySequence: sql`${i.sequence}`,
    },
    // Only while the replay runs and has sent no more since it was read: a second copy of the step sends nothing twice.
    sql`exists (select 1 from ${webhookReplays} where ${webhookReplays.id} = ${replay.id} and ${webhookReplays.status} = 'running' and ${webhookReplays.sentSequence} = ${replay.sentSequence})`,
    next,
  ).returning({ id: webhookDeliveries.id, replaySequence: webhookDeliveries.replaySequence });
}

/** The replay's next `limit` items after `after`, as SQL: read on the items' key. */
function nextItems(replayId: string, after: number, limit: number): SQL {
  const i = webhookReplayItems;
  return sql`(select * from ${i} where ${i.replayId} = ${replayId} and ${i.sequence} > ${after} order by ${i.sequence} limit ${fixedLimit(limit)})`;
}

/**
 * Right after sendNextItems in its batch, under the same guard (running, nothing sent since it
 * was read): the record counts what it made (`changes()`, that statement's rows) and moves its
 * last sequence sent to the last of those items.
 */
export function countSent(db: Db, replay: ReplayRow, limit: number, now: number) {
  const r = webhookReplays;
  return db
    .update(r)
    .set({
      sent: sql`${r.sent} + changes()`,
      sentSequence: sql`coalesce((select max("sequence") from ${nextItems(replay.id, replay.sentSequence, limit)}), ${replay.sentSequence})`,
      updatedAt: now,
    })
    .where(and(eq(r.id, replay.id), equalsLiteral(r.status, "running"), eq(r.sentSequence, replay.sentSequence)));
}

/** After countSent in its batch: the items sent go (those up to the record's last sequence sent). */
export function dropSentItems(db: Db, replayId: string) {
  const i = webhookReplayItems;
  const sent = sql`(select ${webhookReplays.sentSequence} from ${webhookReplays} where ${webhookReplays.id} = ${replayId})`;
  return db.delete(i).where(and(eq(i.replayId, replayId), sql`${i.sequence} <= coalesce(${sent}, 0)`));
}

/** Deletes up to `limit` of a replay's items (a canceled or ended replay's rest); returns how many went. */
export function deleteItems(db: Db, replayId: string, limit: number) {
  const i = webhookReplayItems;
  const some = db.select({ sequence: i.sequence }).from(i).where(eq(i.replayId, replayId)).limit(fixedLimit(limit));
  return db
    .delete(i)
    .where(and(eq(i.replayId, replayId), sql`${i.sequence} in ${some}`))
    .returning({ sequence: i.sequence });
}

/** The account's subscription's replays, as the WHERE of their list. */
export function replaysOf(accountId: string, subscriptionId: string): SQL {
  const r = webhookReplays;
  return and(eq(r.accountId, accountId), eq(r.subscriptionId, subscriptionId))!;
}
