import { and, eq, isNotNull, isNull, sql, type SQL } from "drizzle-orm";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";
import { runBatch, type Db } from "../db/client";
import { fixedLimit } from "../db/fixed-limit";
import {
  accounts,
  apiUsers,
  counterparties,
  idempotencyKeys,
  invoices,
  listCounts,
  paymentEvents,
  paymentInvoices,
  payments,
  timeCounts,
  webhookAttempts,
  webhookDeliveries,
  webhookStats,
  webhookSubscriptions,
} from "../db/schema";
import { notFound } from "../errors";

/** Rows one cron run removes at most from each table of an erased account. */
export const ERASE_CHUNK = 500;
/** Archive objects one cron run removes at most. */
const ARCHIVE_CHUNK = 100;

/**
 * Starts erasing an account (contract 10.3): from now on it answers 404, its API users are gone
 * (so they answer 401 at once) and its subscriptions get no more attempts; the cron removes
 * everything else in bounded steps.
 */
export async function eraseAccount(db: Db, id: string, now = Date.now()): Promise<void> {
  const [marked] = (await runBatch(db, [
    db.update(accounts).set({ erasedAt: now }).where(and(eq(accounts.id, id), isNull(accounts.erasedAt))).returning({ id: accounts.id }),
    db.delete(apiUsers).where(sql`${apiUsers.accountId} = ${id} and exists (select 1 from ${accounts} a where a.id = ${id} and a.erased_at = ${now})`),
    // Its subscriptions stop at once: the consumer ends the deliveries of an inactive subscription.
    db.update(webhookSubscriptions).set({ isActive: false }).where(sql`${webhookSubscriptions.accountId} = ${id} and exists (select 1 from ${accounts} a where a.id = ${id} and a.erased_at = ${now})`),
  ])) as [{ id: string }[]];
  if (marked.length === 0) throw notFound();
}

/** A bounded delete: at most `limit` rows of `table` that `where` picks, by rowid. */
function deleteSome(db: Db, table: SQLiteTable, where: SQL, limit = ERASE_CHUNK) {
  return db.delete(table).where(sql`rowid in (select rowid from ${table} where ${where} limit ${fixedLimit(limit)})`).returning({ gone: sql`1` });
}

/**
 * One step of every erasure under way: from each table, at most ERASE_CHUNK of each erased account's
 * rows, children before the rows they refer to (a row goes only once nothing refers to it, so no
 * foreign key ever stops the batch), each found through an index that starts with the account, its
 * subscriptions or its payments; and its archive objects. An account with nothing
 * left loses its own row. Returns how many rows and objects this run removed.
 */
export async function continueErasures(db: Db, archive: R2Bucket | undefined, limit = 2): Promise<number> {
  const erased = await db.select({ id: accounts.id }).from(accounts).where(isNotNull(accounts.erasedAt)).limit(fixedLimit(limit));
  let removed = 0;
  for (const { id } of erased) {
    const subscriptions = sql`(select s.id from ${webhookSubscriptions} s where s.account_id = ${id})`;
    const deliveries = sql`(select d.id from ${webhookDeliveries} d where d.subscription_id in ${subscriptions} limit ${fixedLimit(ERASE_CHUNK)})`;
    // Payments go only once the delivery log is gone: a delivery's body is rebuilt from its payment.
    const ofPayments = sql`(select p.id from ${payments} p where p.account_id = ${id} and not exists (select 1 from ${webhookDeliveries} d where d.subscription_id in ${subscriptions}) limit ${fixedLimit(ERASE_CHUNK)})`;
    const results = (await runBatch(db, [
      db.delete(webhookAttempts).where(sql`${webhookAttempts.deliveryId} in ${deliveries}`).returning({ gone: sql`1` }),
      deleteSome(db, webhookDeliveries, sql`${webhookDeliveries.subscriptionId} in ${subscriptions} and not exists (select 1 from ${webhookAttempts} a where a.delivery_id = ${webhookDeliveries.id})`),
      deleteSome(db, webhookStats, sql`${webhookStats.subscriptionId} in ${subscriptions}`),
      deleteSome(db, webhookSubscriptions, sql`${webhookSubscriptions.accountId} = ${id} and not exists (select 1 from ${webhookDeliveries} d where d.subscription_id = ${webhookSubscriptions.id})`),
      db.delete(paymentEvents).where(sql`${paymentEvents.paymentId} in ${ofPayments}`).returning({ gone: sql`1` }),
      db.delete(paymentInvoices).where(sql`${paymentInvoices.paymentId} in ${ofPayments}`).returning({ gone: sql`1` }),
      deleteSome(
        db,
        payments,
        sql`${payments.accountId} = ${id} and not exists (select 1 from ${paymentEvents} e where e.payment_id = ${payments.id}) and not exists (select 1 from ${paymentInvoices} l where l.payment_id = ${payments.id})`,
      ),
      deleteSome(db, invoices, sql`${invoices.accountId} = ${id} and not exists (select 1 from ${paymentInvoices} l where l.invoice_id = ${invoices.id})`),
      deleteSome(db, counterparties, sql`${counterparties.accountId} = ${id} and not exists (select 1 from ${invoices} i where i.account_id = ${id}) and not exists (select 1 from ${payments} p where p.account_id = ${id})`),
      deleteSome(db, listCounts, eq(listCounts.accountId, id)),
      deleteSome(db, timeCounts, eq(timeCounts.accountId, id)),
      deleteSome(db, idempotencyKeys, eq(idempotencyKeys.accountId, id)),
    ])) as unknown[][];
    const rows = results.reduce((sum, gone) => sum + gone.length, 0);
    const objects = archive ? await removeArchive(archive, id) : 0;
    removed += rows + objects;
    if (rows === 0 && objects === 0) {
      // Nothing of it is left (a write that raced the erasure would have been refused: its users are gone).
      await db.delete(accounts).where(and(eq(accounts.id, id), isNotNull(accounts.erasedAt)));
    }
  }
  return removed;
}

async function removeArchive(archive: R2Bucket, accountId: string): Promise<number> {
  const listed = await archive.list({ prefix: `deliveries/${accountId}/`, limit: ARCHIVE_CHUNK });
  const keys = listed.objects.map((object) => object.key);
  if (keys.length > 0) await archive.delete(keys);
  return keys.length;
}
