/**
 * The statements on a subscription's row, one function each. The verbs (subscriptions.ts) put
 * them in their batches by name; none is built inline.
 */
import { and, eq, exists, inArray, sql, type SQL } from "drizzle-orm";
import type { Db } from "../../db/client";
import { guardedInsert } from "../../db/guarded-insert";
import {
  webhookAttempts,
  webhookDeliveries,
  webhookReplayItems,
  webhookReplays,
  webhookStats,
  webhookSubscriptions,
  type SubscriptionRow,
} from "../../db/schema";
import { inAccount } from "../../db/scope";

/** The account's subscription `id`: the condition every statement on its row starts from. */
export function ofSubscription(accountId: string, id: string): SQL {
  return and(inAccount(webhookSubscriptions, accountId), eq(webhookSubscriptions.id, id))!;
}

/** Reads the account's subscription `id` (no row: not the account's, or gone). */
export function selectSubscription(db: Db, accountId: string, id: string) {
  return db.select().from(webhookSubscriptions).where(ofSubscription(accountId, id));
}

/** Whether the account has room for one more subscription: fewer than `cap`, counted in the statement. */
export function roomForOne(accountId: string, cap: number): SQL {
  return sql`(select count(*) from ${webhookSubscriptions} s where s.account_id = ${accountId}) < ${cap}`;
}

/** Inserts the row if `guard` holds (the key's claim, the cap, the sealing key's fit); returns its id if it did. */
export function insertSubscription(db: Db, row: SubscriptionRow, guard: SQL) {
  return guardedInsert(db, webhookSubscriptions, row, guard).returning({ id: webhookSubscriptions.id });
}

/** Whether a row with this id exists: a keyed answer is stored only if the insert made it. */
export function subscriptionExists(db: Db, id: string): SQL {
  return exists(db.select({ id: webhookSubscriptions.id }).from(webhookSubscriptions).where(eq(webhookSubscriptions.id, id)));
}

/** Reads whether the sealing key fits (sealing.ts's `sealingKeyFits`), as `{ fits: 0 | 1 }`. */
export function selectKeyFits(db: Db, fits: SQL) {
  return db.select({ fits: fits.mapWith(Number) }).from(sql`(select 1)`);
}

/** Writes `changes` to the account's subscription `id` if `guard` holds; returns the row as written. */
export function updateSubscriptionRow(db: Db, accountId: string, id: string, changes: Partial<SubscriptionRow>, guard: SQL = sql`1`) {
  return db
    .update(webhookSubscriptions)
    .set(changes)
    .where(and(guard, ofSubscription(accountId, id)))
    .returning();
}

/** Whether the account's subscription `id` has this sealed secret: a rotation's answer is stored only if it applied. */
export function hasSecret(db: Db, accountId: string, id: string, secret: string): SQL {
  return exists(
    db
      .select({ id: webhookSubscriptions.id })
      .from(webhookSubscriptions)
      .where(and(ofSubscription(accountId, id), eq(webhookSubscriptions.secret, secret))),
  );
}

/** Deletes the attempts of subscription `id`'s deliveries (first of a delete, before the deliveries they point at). */
export function deleteSubscriptionAttempts(db: Db, id: string) {
  const deliveries = db.select({ id: webhookDeliveries.id }).from(webhookDeliveries).where(eq(webhookDeliveries.subscriptionId, id));
  return db.delete(webhookAttempts).where(inArray(webhookAttempts.deliveryId, deliveries));
}

/** Deletes subscription `id`'s delivery log. */
export function deleteSubscriptionDeliveries(db: Db, id: string) {
  return db.delete(webhookDeliveries).where(eq(webhookDeliveries.subscriptionId, id));
}

/** Deletes subscription `id`'s stats buckets. */
export function deleteSubscriptionStats(db: Db, id: string) {
  return db.delete(webhookStats).where(eq(webhookStats.subscriptionId, id));
}

/** Deletes subscription `id`'s replays' items, then its replays (before the subscription they name). */
export function deleteSubscriptionReplays(db: Db, id: string) {
  const replays = db.select({ id: webhookReplays.id }).from(webhookReplays).where(eq(webhookReplays.subscriptionId, id));
  return [
    db.delete(webhookReplayItems).where(inArray(webhookReplayItems.replayId, replays)),
    db.delete(webhookReplays).where(eq(webhookReplays.subscriptionId, id)),
  ];
}

/** Deletes the account's subscription `id`'s row. */
export function deleteSubscriptionRow(db: Db, accountId: string, id: string) {
  return db.delete(webhookSubscriptions).where(ofSubscription(accountId, id));
}
