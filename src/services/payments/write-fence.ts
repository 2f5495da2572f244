/**
 * The payment write fence.
 *
 * Protocol: a payment write is one D1 batch, which reads nothing before it. Its first statement
 * writes the payment row with a fresh write token, only where the write is allowed on the rows as
 * they are then: a new payment's when its checks pass (new-payment.ts, with the checks in
 * creation.ts), an event's when the lifecycle allows it (event-write.ts, with the lifecycle in
 * lifecycle.ts). Every later statement of the batch (the event, the invoice links, and the webhook
 * outbox's delivery rows, from the account's subscriptions as they are then) runs only if the
 * payment row carries the new token at that point of the batch. So the delivery rows exist iff the
 * payment row carries our write token: a change is never committed without its deliveries, nor
 * deliveries without their change, and a write that did not apply leaves nothing. The batch ends
 * by reading back what the checks decided, so a write that did not apply says why (a 400, 404
 * or 409, from the same SQL that refused it). D1 runs a database's batches
 * one at a time, so no two writes race between a check and its write.
 *
 * The stamp (`updated`, and the event's `created`) is taken inside the first statement: one ms
 * above every stamp of the account, or now if later. D1 runs batches one at a time, so stamps
 * rise in commit order and `updated__gt` polling never misses a write committed after a poll,
 * with no conflict between concurrent writes of the account. Everything else that carries the
 * stamp reads it back from the payment row: the event and the delivery rows. The payment's stored
 * detail (which lists read whole) is written by the first statement itself, as SQL's JSON of the
 * rows it reads (db/payment-detail.ts), the texts the request brought given as JavaScript's JSON. The delivery rows keep
 * no body: each is rebuilt from that detail as its event left it (webhooks/outbox/bodies.ts). The
 * payment counts are not written here: they count the payments and events after their mark
 * (services/counts), and the batch reads the mark back so the caller can ask for a fold.
 */
import { sql, type SQL } from "drizzle-orm";
import { isoSql } from "../../db/stamped-text";
import { aliased } from "../../db/aliased";
import { payments } from "../../db/schema";
import { newId, newToken } from "../../lib/ids";

/**
 * A payment write's stamp, as SQL read in its first statement: one ms above every stamp of the
 * account, or `now` if later.
 */
export function newStamp(accountId: string, now: number): SQL {
  const latest = aliased(payments, "latest");
  return sql`max(${now}, coalesce((select max(${latest.updatedAt}) from ${latest.from} where ${latest.accountId} = ${accountId}), 0) + 1)`;
}

/**
 * What every payment write's batch is built from: its time, the event it adds, its fresh write
 * token and the stamp taken in its first statement (as ms and as text), the payment row as the
 * later statements read it (`p`, an alias of payments), the condition over `p` that the row
 * carries the token (`written`), and, anywhere in the batch, that the write applied (`applied`).
 */
export function paymentWrite(accountId: string, paymentId: string) {
  const now = Date.now();
  const token = newToken();
  const stamp = newStamp(accountId, now);
  const p = aliased(payments, "p");
  const written = sql`${p.id} = ${paymentId} and ${p.writeToken} = ${token}`;
  return {
    now,
    eventId: newId("pev"),
    token,
    stamp,
    at: isoSql(stamp),
    p,
    written,
    applied: sql`exists (select 1 from ${p.from} where ${written})`,
  };
}

/** The payment row a write's later statements read (`p` of `paymentWrite`). */
export type WrittenPayment = ReturnType<typeof paymentWrite>["p"];
