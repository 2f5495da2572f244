import { and, eq, isNotNull, isNull, sql, type SQL } from "drizzle-orm";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import { createDb, runBatch, runNamedBatch, type Db } from "../db/client";
import { shardBinding, shardNotConfigured } from "../db/shards";
import type { Env } from "../env";
import { fixedLimit } from "../db/fixed-limit";
import {
  accounts,
  apiUsers,
  publishedKeys,
  counterparties,
  idempotencyKeys,
  moveLog,
  invoices,
  listCounts,
  paymentEvents,
  paymentInvoices,
  payments,
  tenants,
  timeCounts,
  webhookAttempts,
  webhookDeliveries,
  webhookStats,
  webhookReplayItems,
  webhookReplays,
  webhookSubscriptions,
} from "../db/schema";
import { conflict, notFound } from "../errors";
import { isBudgetSpent } from "../lib/run-budget";

/** Rows one cron run removes at most from each table of an erased account. */
export const ERASE_CHUNK = 500;
/** Archive objects one cron run removes at most. */
const ARCHIVE_CHUNK = 100;
/**
 * The cron's floor for erasures (lib/run-budget.ts): its smallest unit is the list of erasures, one
 * account's step (a batch of at most 18 statements) and the directory's delete; no bookkeeping.
 */
export const ERASURE_STEP = { floor: 1 + 18 + 1, reserve: 0 };

/**
 * Starts erasing an account (docs/operations.md, "Erasing an account"): in the directory, from now
 * on it answers 404 and its API users are gone (so they answer 401 at once); on its shard, its
 * subscriptions get no more attempts. The cron removes everything else in bounded steps (and
 * pauses the subscriptions again, should the shard not have answered here).
 */
export async function eraseAccount(directory: Db, env: Env, id: string, now = Date.now()): Promise<void> {
  const moving = await directory
    .select({ state: accounts.moveState })
    .from(accounts)
    .where(and(eq(accounts.id, id), isNull(accounts.erasedAt)))
    .get();
  if (moving?.state) throw conflict("The account is being moved to another shard; erase it once the move is done.");
  const { marked } = await runNamedBatch(directory, {
    marked: markErased(directory, id, now),
    users: deleteErasedUsers(directory, id, now),
    keys: deleteErasedPublications(directory, id, now),
  });
  if (marked.length === 0) throw notFound();
  const binding = shardBinding(env, marked[0]!.shard);
  if (!binding) return;
  await pauseSubscriptions(createDb(binding), id).catch((error) =>
    console.error(JSON.stringify({ type: "erasure_error", account_id: id, shard: marked[0]!.shard, error: String(error) })),
  );
}

/** Marks the account erased at `now` unless it is erased or moving; returns its shard if it did. */
export function markErased(directory: Db, id: string, now: number) {
  return directory
    .update(accounts)
    .set({ erasedAt: now })
    .where(and(eq(accounts.id, id), isNull(accounts.erasedAt), isNull(accounts.moveState)))
    .returning({ shard: accounts.shard });
}

/** Deletes the account's API users if it was erased at `now` (by markErased, in the same batch). */
export function deleteErasedUsers(directory: Db, id: string, now: number) {
  return directory
    .delete(apiUsers)
    .where(sql`${apiUsers.accountId} = ${id} and exists (select 1 from ${accounts} a where a.id = ${id} and a.erased_at = ${now})`);
}

/** Deletes the account's published key sets if it was erased at `now` (by markErased, in the same batch). */
export function deleteErasedPublications(directory: Db, id: string, now: number) {
  return directory
    .delete(publishedKeys)
    .where(sql`${publishedKeys.accountId} = ${id} and exists (select 1 from ${accounts} a where a.id = ${id} and a.erased_at = ${now})`);
}

// The consumer ends the deliveries of an inactive subscription.
const pauseSubscriptions = (db: Db, id: string) =>
  db
    .update(webhookSubscriptions)
    .set({ isActive: false })
    .where(and(eq(webhookSubscriptions.accountId, id), eq(webhookSubscriptions.isActive, true)));

/** A bounded delete: at most `limit` rows of `table` that `where` picks, by `key` (rowid, or a WITHOUT ROWID table's key columns). */
function deleteSome(
  db: Db,
  table: SQLiteTable,
  where: SQL,
  { limit = ERASE_CHUNK, key = [sql`rowid`] }: { limit?: number; key?: (SQL | SQLiteColumn)[] } = {},
) {
  const columns = sql.join(key, sql`, `);
  return db
    .delete(table)
    .where(sql`(${columns}) in (select ${columns} from ${table} where ${where} limit ${fixedLimit(limit)})`)
    .returning({ gone: sql`1` });
}

/**
 * One step of every erasure under way (the directory lists them, each with its shard): on the
 * account's shard, at most ERASE_CHUNK of its rows from each table, children before the rows they
 * refer to (a row goes only once nothing refers to it, so no foreign key ever stops the batch), each
 * found through an index that starts with the account, its subscriptions or its payments; its
 * archive objects; and, once nothing of it is left, its row in the shard, then in the directory.
 * One account's failing shard does not hold back the others'. Returns how many rows and objects
 * this run removed.
 */
export async function continueErasures(directory: Db, env: Env, limit = 2): Promise<number> {
  const erased = await directory.select({ id: accounts.id, shard: accounts.shard }).from(accounts).where(isNotNull(accounts.erasedAt)).limit(fixedLimit(limit));
  let removed = 0;
  for (const { id, shard } of erased) {
    const binding = shardBinding(env, shard);
    if (!binding) {
      shardNotConfigured(shard, { erasing: id });
      continue;
    }
    try {
      const rows = await removeAccountRows(createDb(binding), id, { pause: true });
      const objects = env.ARCHIVE ? await removeArchive(env.ARCHIVE, id) : 0;
      removed += rows + objects;
      // Nothing of it is left (a write that raced the erasure would have been refused: its users are gone).
      if (rows === 0 && objects === 0) await directory.delete(accounts).where(and(eq(accounts.id, id), isNotNull(accounts.erasedAt)));
    } catch (error) {
      if (isBudgetSpent(error)) throw error;
      console.error(JSON.stringify({ type: "erasure_error", account_id: id, shard, error: String(error) }));
    }
  }
  return removed;
}

/**
 * One bounded step of removing account `id`'s rows from a shard: how many rows it removed (0 once
 * nothing is left). Erasure first pauses its subscriptions (`pause`); a move's clean-up of the shard
 * it left only deletes.
 */
export async function removeAccountRows(db: Db, id: string, { pause }: { pause: boolean }): Promise<number> {
  const subscriptions = sql`(select s.id from ${webhookSubscriptions} s where s.account_id = ${id})`;
  const deliveries = sql`(select d.id from ${webhookDeliveries} d where d.subscription_id in ${subscriptions} limit ${fixedLimit(ERASE_CHUNK)})`;
  // Payments go only once the delivery log is gone: a delivery's body is rebuilt from its payment.
  const logGone = sql`not exists (select 1 from ${webhookDeliveries} d where d.subscription_id in ${subscriptions})`;
  const ofPayments = sql`(select p.id from ${payments} p where p.account_id = ${id} and ${logGone} limit ${fixedLimit(ERASE_CHUNK)})`;
  // The invoices whose links go in this step: their payments' log is gone too.
  const ofInvoices = sql`(select i.id from ${invoices} i where i.account_id = ${id} and ${logGone} and exists (select 1 from ${paymentInvoices} l where l.invoice_id = i.id) limit ${fixedLimit(ERASE_CHUNK)})`;
  const linksLeft = sql`(select 1 from ${invoices} i join ${paymentInvoices} l on l.invoice_id = i.id where i.account_id = ${id})`;
  const results = (await runBatch(db, [
    ...(pause ? [pauseSubscriptions(db, id).returning({ gone: sql`1` })] : []),
    db
      .delete(webhookAttempts)
      .where(sql`${webhookAttempts.deliveryId} in ${deliveries}`)
      .returning({ gone: sql`1` }),
    deleteSome(
      db,
      webhookDeliveries,
      sql`${webhookDeliveries.subscriptionId} in ${subscriptions} and not exists (select 1 from ${webhookAttempts} a where a.delivery_id = ${webhookDeliveries.id})`,
      { key: [webhookDeliveries.id] },
    ),
    deleteSome(db, webhookStats, sql`${webhookStats.subscriptionId} in ${subscriptions}`),
    // A replay's items, then the replay once none is left, before its subscription.
    deleteSome(db, webhookReplayItems, sql`${webhookReplayItems.replayId} in (select r.id from ${webhookReplays} r where r.account_id = ${id})`),
    deleteSome(
      db,
      webhookReplays,
      sql`${webhookReplays.accountId} = ${id} and not exists (select 1 from ${webhookReplayItems} i where i.replay_id = ${webhookReplays.id})`,
    ),
    deleteSome(
      db,
      webhookSubscriptions,
      sql`${webhookSubscriptions.accountId} = ${id} and not exists (select 1 from ${webhookDeliveries} d where d.subscription_id = ${webhookSubscriptions.id})
        and not exists (select 1 from ${webhookReplays} r where r.subscription_id = ${webhookSubscriptions.id})`,
    ),
    db
      .delete(paymentEvents)
      .where(sql`${paymentEvents.paymentId} in ${ofPayments}`)
      .returning({ gone: sql`1` }),
    // Links go by their invoices (their key), before any payment: a payment goes once no link is left.
    db
      .delete(paymentInvoices)
      .where(sql`${paymentInvoices.invoiceId} in ${ofInvoices}`)
      .returning({ gone: sql`1` }),
    deleteSome(
      db,
      payments,
      sql`${payments.accountId} = ${id} and not exists (select 1 from ${paymentEvents} e where e.payment_id = ${payments.id}) and not exists ${linksLeft}`,
    ),
    deleteSome(db, invoices, sql`${invoices.accountId} = ${id} and not exists (select 1 from ${paymentInvoices} l where l.invoice_id = ${invoices.id})`),
    deleteSome(
      db,
      counterparties,
      sql`${counterparties.accountId} = ${id} and not exists (select 1 from ${invoices} i where i.account_id = ${id}) and not exists (select 1 from ${payments} p where p.account_id = ${id})`,
    ),
    deleteSome(db, listCounts, eq(listCounts.accountId, id), { key: [listCounts.accountId, listCounts.resource] }),
    deleteSome(db, timeCounts, eq(timeCounts.accountId, id), { key: [timeCounts.accountId, timeCounts.key, timeCounts.size, timeCounts.bucket] }),
    deleteSome(db, idempotencyKeys, eq(idempotencyKeys.accountId, id)),
    // A move's change log left on this shard (a move canceled or finished leaves none for long).
    deleteSome(db, moveLog, eq(moveLog.accountId, id), { key: [moveLog.seq] }),
    db
      .delete(tenants)
      .where(
        sql`${tenants.id} = ${id} and not exists (select 1 from ${counterparties} c where c.account_id = ${id}) and not exists (select 1 from ${webhookSubscriptions} s where s.account_id = ${id})`,
      )
      .returning({ gone: sql`1` }),
  ])) as unknown[][];
  return results.reduce((sum, gone) => sum + gone.length, 0);
}

async function removeArchive(archive: R2Bucket, accountId: string): Promise<number> {
  const listed = await archive.list({ prefix: `deliveries/${accountId}/`, limit: ARCHIVE_CHUNK });
  const keys = listed.objects.map((object) => object.key);
  if (keys.length > 0) await archive.delete(keys);
  return keys.length;
}
