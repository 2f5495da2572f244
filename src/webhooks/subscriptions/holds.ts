/**
 * Holds instead of silent loss (docs/interface.md, "Holds"). A paused subscription, or one
 * deactivated by a 410 or by 5 days of failures, still gets a delivery row for every change, with
 * status `held`: nothing is attempted. Made active again, its held deliveries become `pending`
 * with a fresh retry schedule and go to the queue oldest sequence first; or they are discarded.
 * Pausing holds its pending deliveries that no attempt is working on; an attempt under way when it
 * was paused ends held if it would have been retried (record.ts), and a leased delivery of an
 * inactive subscription is held (consumer.ts).
 */
import { and, eq, isNull, lt, or, sql, type SQL } from "drizzle-orm";
import { runNamedBatch, type BatchStatement, type Db } from "../../db/client";
import { UNKEYED, type Keyed, type KeyedWrite } from "../../idempotency";
import { deliveryStatusIs, sends, sendsSql, webhookAttempts, webhookDeliveries, webhookSubscriptions } from "../../db/schema";
import { conflict, notFound } from "../../errors";
import type { ServiceContext } from "../../context";
import { inAccount } from "../../db/scope";
import { handOver } from "../outbox/outbox";
import { droppedPast } from "../outbox/sequence";
import { selectSubscription } from "./statements";

/** The columns of a delivery put on hold: not due, not handed over, lease cleared. */
export const HELD = { status: "held", nextAttemptAt: null, enqueuedAt: null, leasedUntil: null, leaseToken: null } as const;

/**
 * Holds the subscription's pending deliveries that no attempt is working on, RELEASED_AT_ONCE at
 * most, oldest first (read on its log); the consumer holds the others as their messages come (a
 * leased delivery of an inactive subscription is held).
 */
export function holdPending(db: Db, accountId: string, subscriptionId: string, now: number) {
  const d = webhookDeliveries;
  const first = sql`(select x.id from ${d} x where x.subscription_id = ${subscriptionId} and x.status = 'pending' and (x.leased_until is null or x.leased_until < ${now}) order by x.created_at, x.id limit ${sql.raw(String(RELEASED_AT_ONCE))})`;
  return db
    .update(d)
    .set({ ...HELD, updatedAt: now })
    .where(
      and(
        inAccount(d, accountId),
        eq(d.subscriptionId, subscriptionId),
        deliveryStatusIs("pending"),
        or(isNull(d.leasedUntil), lt(d.leasedUntil, now)),
        sql`${d.id} in ${first}`,
      ),
    );
}

/**
 * Held deliveries one request settles or releases at most, and one call discards at most: the
 * statements stay bounded whatever a subscription holds. The cron releases the rest of an active
 * subscription's (continueReleases); a discard is called again for the rest.
 */
export const RELEASED_AT_ONCE = 1_000;
export const DISCARDED_AT_ONCE = 10_000;

/** The subscription's feed position its reader acked (null: none). */
const ackedOf = (subscriptionId: string) => sql`(select s.feed_acked_sequence from ${webhookSubscriptions} s where s.id = ${subscriptionId})`;

/** The ids of the subscription's first `limit` held deliveries (oldest first, on its held index) that match `also`. */
function firstHeld(subscriptionId: string, limit: number, also: SQL = sql`1`): SQL {
  const d = webhookDeliveries;
  return sql`(select x.id from ${d} x where x.subscription_id = ${subscriptionId} and x.status = 'held' and ${also} order by x.created_at, x.id limit ${sql.raw(String(limit))})`;
}

/**
 * Settles the subscription's held deliveries up to its acked feed position, RELEASED_AT_ONCE at
 * most: a pull-only reader received them through the feed, so a resume does not push them again.
 * They end `succeeded`, with no attempt.
 */
export function settleAcked(db: Db, accountId: string, subscriptionId: string, now: number): BatchStatement {
  const d = webhookDeliveries;
  return db
    .update(d)
    .set({ ...SETTLED, updatedAt: now })
    .where(
      and(
        inAccount(d, accountId),
        eq(d.subscriptionId, subscriptionId),
        sql`${d.id} in ${firstHeld(subscriptionId, RELEASED_AT_ONCE, sql`x.sequence <= ${ackedOf(subscriptionId)}`)}`,
      ),
    );
}

/** The columns of a held delivery the feed's reader acked: ended, received. */
const SETTLED = { status: "succeeded", nextAttemptAt: null, enqueuedAt: null, leasedUntil: null, leaseToken: null } as const;

/**
 * Makes the subscription's held deliveries that its feed reader has not acked pending again, due
 * now with a fresh retry schedule, RELEASED_AT_ONCE at most, oldest first; returns their ids.
 */
export function releaseHeld(db: Db, accountId: string, subscriptionId: string, now: number) {
  const d = webhookDeliveries;
  const notAcked = sql`(x.sequence is null or ${ackedOf(subscriptionId)} is null or x.sequence > ${ackedOf(subscriptionId)})`;
  return db
    .update(d)
    .set({ status: "pending", nextAttemptAt: now, scheduleStartedAt: null, scheduleFirstAttempt: sql`${d.attempts} + 1`, enqueuedAt: now, updatedAt: now })
    .where(
      and(
        inAccount(d, accountId),
        eq(d.subscriptionId, subscriptionId),
        // Only while it sends (schema's `sends`): a resume of one whose receiver has not proven ownership releases nothing.
        sql`exists (select 1 from ${webhookSubscriptions} z where z.id = ${subscriptionId} and ${sql.raw(sendsSql("z"))})`,
        sql`${d.id} in ${firstHeld(subscriptionId, RELEASED_AT_ONCE, notAcked)}`,
      ),
    )
    .returning({ id: d.id, sequence: d.sequence, createdAt: d.createdAt });
}

/** Released deliveries' ids, oldest sequence first. Pure. */
export function inSequence(released: { id: string; sequence: number | null; createdAt: number }[]): string[] {
  return [...released].sort((a, b) => (a.sequence ?? 0) - (b.sequence ?? 0) || a.createdAt - b.createdAt).map((row) => row.id);
}

/** Hands released deliveries to the queue, oldest sequence first (the sweeper sends any the queue refused). */
export async function sendReleased(ctx: ServiceContext, released: { id: string; sequence: number | null; createdAt: number }[]): Promise<void> {
  await handOver(ctx.db, ctx.queue, inSequence(released));
}

/**
 * Drops the held deliveries of a paused subscription (202 `{discarded}`), DISCARDED_AT_ONCE a call
 * at most, oldest first (call again while it answers that many); an active one has none to drop
 * (409). Its sequence goes on past them (outbox/sequence.ts).
 */
export async function discardHeld(
  { db, accountId }: ServiceContext,
  subscriptionId: string,
  keyed: KeyedWrite<SQL> = UNKEYED,
): Promise<Keyed<{ discarded: number }>> {
  const subscription = await selectSubscription(db, accountId, subscriptionId).get();
  if (!subscription) throw notFound();
  if (sends(subscription)) throw conflict("The subscription is active: its deliveries are not held. Pause it first to discard what it holds.");
  // The same deliveries in each statement of the batch: the first held ones, in the log's order.
  const dropped = firstHeld(subscriptionId, DISCARDED_AT_ONCE);
  const batch = await runNamedBatch(db, {
    key: keyed.claim,
    sequence: sequencePastDropped(db, subscriptionId, dropped, keyed.owns),
    attempts: deleteDroppedAttempts(db, dropped, keyed.owns),
    gone: deleteDropped(db, accountId, subscriptionId, dropped, keyed.owns),
    // changes(): the rows the delete just removed, in this batch.
    answer: await keyed.answer(sql`json_object('discarded', changes())`),
  });
  const decided = keyed.decided(batch.key);
  return decided ? { decided } : { ran: { discarded: batch.gone.length } };
}

/** Moves the subscription's numbers on above the dropped deliveries': a feed cursor stays valid (a discard is not retention). */
export function sequencePastDropped(db: Db, subscriptionId: string, dropped: SQL, guard: SQL) {
  const d = webhookDeliveries;
  return db
    .update(webhookSubscriptions)
    .set(droppedPast((column) => sql`(select max(y.${sql.raw(column)}) from ${d} y where y.id in ${dropped})`))
    .where(and(guard, eq(webhookSubscriptions.id, subscriptionId)));
}

/** Deletes the dropped deliveries' attempts (before the deliveries they point at). */
export function deleteDroppedAttempts(db: Db, dropped: SQL, guard: SQL) {
  return db.delete(webhookAttempts).where(and(guard, sql`${webhookAttempts.deliveryId} in ${dropped}`));
}

/** Deletes the dropped deliveries of the account's subscription; returns their ids. */
export function deleteDropped(db: Db, accountId: string, subscriptionId: string, dropped: SQL, guard: SQL) {
  const d = webhookDeliveries;
  return db
    .delete(d)
    .where(and(guard, inAccount(d, accountId), eq(d.subscriptionId, subscriptionId), sql`${d.id} in ${dropped}`))
    .returning({ id: d.id });
}

/** How many deliveries the subscription holds now, counted on its held index. */
export function heldCount(subscriptionId: SQL) {
  return sql<number>`(select count(*) from ${webhookDeliveries} h where h.subscription_id = ${subscriptionId} and h.status = 'held')`.mapWith(Number);
}
