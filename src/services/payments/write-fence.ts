/**
 * The payment write fence.
 *
 * Protocol: a payment write is one D1 batch, which reads nothing before it. Its first statement
 * writes the payment row with a fresh write token, only where the write is allowed on the rows as
 * they are then: a new payment's when its counterparties, invoices and their claims pass (its
 * `allowed` condition here), an event's when the lifecycle allows it (event-write.ts, which
 * writes events). Every later statement of the batch (the event, the invoice links, and the webhook
 * outbox's delivery rows, from the account's subscriptions as they are then) runs only if the
 * payment row carries the new token at that point of the batch. So the delivery rows exist iff the
 * payment row carries our write token: a change is never committed without its deliveries, nor
 * deliveries without their change, and a write that did not apply leaves nothing. The batch ends
 * by reading back what the checks look at, so a write that did not apply says why (the same
 * 400 and 409 as the pure checks of input.ts and lifecycle.ts give). D1 runs a database's batches
 * one at a time, so no two writes race between a check and its write.
 *
 * The stamp (`updated`, and the event's `created`) is taken inside the first statement: one ms
 * above every stamp of the account, or now if later. D1 runs batches one at a time, so stamps
 * rise in commit order and `updated__gt` polling never misses a write committed after a poll,
 * with no conflict between concurrent writes of the account. Everything else that carries the
 * stamp reads it back from the payment row: the event and the delivery rows. The payment's stored
 * detail (which lists read whole) is written by the first statement itself, as SQL's JSON of the
 * rows it reads, the texts the request brought given as JavaScript's JSON. The delivery rows keep
 * no body: each is rebuilt from that detail as its event left it (webhooks/outbox/bodies.ts). The
 * payment counts are not written here: they count the payments and events after their mark
 * (services/counts), and the batch reads the mark back so the caller can ask for a fold.
 */
import { and, eq, sql, type SQL } from "drizzle-orm";
import { runNamedBatch, type BatchStatement, type Db } from "../../db/client";
import { fixedLimit } from "../../db/fixed-limit";
import { guardedInsert } from "../../db/guarded-insert";
import { inList } from "../../db/in-list";
import { inAccount } from "../../db/scope";
import { isoSql } from "../../db/stamped-text";
import { counterparties, invoiceClaimed, invoices, paymentEvents, paymentInvoices, payments, tenants } from "../../db/schema";
import { conflict } from "../../errors";
import { newId, newToken } from "../../lib/ids";
import { outboxOfChange } from "../../webhooks";
import { isCounterparty } from "../counterparties";
import { countedTo } from "../counts";
import { checkPaymentInput } from "./input";
import type { PaymentFields } from "./lifecycle";
import type { PaymentView } from "./view";

/**
 * A payment write's stamp, as SQL read in its first statement: one ms above every stamp of the
 * account, or `now` if later.
 */
export function newStamp(accountId: string, now: number): SQL {
  return sql`max(${now}, coalesce((select max(p.updated_at) from ${payments} p where p.account_id = ${accountId}), 0) + 1)`;
}

/**
 * What every payment write's batch is built from: its time, the event it adds, its fresh write
 * token and the stamp taken in its first statement (as ms and as text), and, over the payment row
 * `p` (the `p(column)`s), the condition that the row carries the token (`written`) and, anywhere
 * in the batch, that the write applied (`applied`).
 */
export function paymentWrite(accountId: string, paymentId: string) {
  const now = Date.now();
  const token = newToken();
  const stamp = newStamp(accountId, now);
  const written = sql`p.id = ${paymentId} and p.write_token = ${token}`;
  return {
    now,
    eventId: newId("pev"),
    token,
    stamp,
    at: isoSql(stamp),
    written,
    applied: sql`exists (select 1 from ${payments} p where ${written})`,
    p: (column: string) => sql.raw(`p.${column}`),
  };
}

/** Text the request brought, as the JSON JavaScript writes of it, for SQL to put in a JSON document as it is. */
export function jsonOf(value: string | null): SQL {
  return sql`json(${JSON.stringify(value)})`;
}

export interface WrittenPayment {
  detail: PaymentView;
  stamp: number;
  countedTo: number;
  /** The deliveries to hand to the queue (their subscriptions were active). */
  deliveryIds: string[];
}

/**
 * Writes a new payment of `accountId` for `input`, with its first event, its invoice claims and
 * its outbox rows, and the statements `answer` makes of its stored detail (a keyed request's
 * answer). Throws the checks' 400 (input.ts) or 409 (an invoice another payment holds) when it
 * cannot be made; then nothing is written.
 */
export async function commitNewPayment(
  db: Db,
  accountId: string,
  input: PaymentFields,
  answer: (detail: SQL, applied: SQL) => Promise<BatchStatement[]>,
): Promise<WrittenPayment> {
  const paymentId = newId("pmt");
  const { now, eventId, token, stamp, at, written, applied, p } = paymentWrite(accountId, paymentId);
  const buyerId = input.originating_counterparty_id;
  const supplierId = input.receiving_counterparty_id;
  const ids = input.invoice_ids;
  // The account's invoices among those named, as the rows `i` of a subquery: found by their ids
  // (the unary + keeps SQLite from walking the account's invoices in created order instead).
  const named = sql`${invoices} i where i.id in (select value from json_each(${JSON.stringify(ids)})) and +i.account_id = ${accountId}`;
  const allowed = sql`${isCounterparty(accountId, buyerId, "buyer")} and ${isCounterparty(accountId, supplierId, "supplier")}
    and ${new Set(ids).size === ids.length ? sql`1` : sql`0`}
    and (select count(*) from ${named} and i.buyer_id = ${buyerId} and i.supplier_id = ${supplierId}) = ${ids.length}
    and (select count(distinct i.currency) from ${named}) = 1
    and not exists (select 1 from json_each(${JSON.stringify(ids)}) j cross join ${paymentInvoices} l where l.invoice_id = j.value and l.claim = '')`;
  const amount = sql`(select sum(i.amount_cents) from ${named})`;
  const currency = sql`(select i.currency from ${named} limit 1)`;
  // The payment detail (view.ts `paymentView`), its invoices oldest first.
  const invoiceList = sql`(select json_group_array(json_object('id', i.id, 'invoice_number', i.invoice_number, 'amount_cents', i.amount_cents) order by i.created_at, i.id) from ${named})`;
  const firstEvent = sql`json_object('id', ${eventId}, 'event_code', 'PU00', 'status', 'pending', 'description', 'Payment created', 'created', ${at})`;
  const detail = sql`json_object('id', ${paymentId}, 'originating_counterparty_id', ${jsonOf(buyerId)}, 'receiving_counterparty_id', ${jsonOf(supplierId)},
    'invoices', json(${invoiceList}), 'amount_cents', ${amount}, 'currency', ${currency}, 'payment_method', ${input.payment_method}, 'status', 'pending',
    'instrument_number', null, 'events', json_array(${firstEvent}), 'refund_reason', null, 'version', 1, 'created', ${at}, 'updated', ${at})`;

  const i = (name: string) => sql.raw(`i.${name}`);
  const insert = guardedInsert(
    db,
    payments,
    {
      id: paymentId,
      accountId,
      originatingCounterpartyId: buyerId,
      receivingCounterpartyId: supplierId,
      amountCents: amount,
      currency,
      paymentMethod: input.payment_method,
      status: "pending",
      instrumentNumber: null,
      refundReason: null,
      version: 1,
      writeToken: token,
      createdAt: stamp,
      updatedAt: stamp,
      detail,
    },
    allowed,
  ).returning({ updatedAt: payments.updatedAt, detail: payments.detail });
  const event = guardedInsert(
    db,
    paymentEvents,
    { id: eventId, paymentId, seq: 1, eventCode: "PU00", status: "pending", description: "Payment created", instrumentNumber: null, refundReason: null, createdAt: p("updated_at") },
    written,
    sql`${payments} p`,
  );
  const links = guardedInsert(
    db,
    paymentInvoices,
    { invoiceId: i("id"), claim: "", paymentId, invoiceNumber: i("invoice_number"), amountCents: i("amount_cents"), invoiceCreatedAt: i("created_at") },
    sql`${i("id")} in (select value from json_each(${JSON.stringify(ids)})) and +${i("account_id")} = ${accountId} and ${applied}`,
    sql`${invoices} i`,
  );
  const batch = await runNamedBatch(db, {
    insert,
    event,
    links,
    outbox: outboxOfChange(db, { accountId, paymentId, applied: written }, now),
    answer: await answer(sql`(select p.detail from ${payments} p where ${written})`, applied),
    mark: db.select({ mark: countedTo(accountId).mapWith(Number) }).from(tenants).where(eq(tenants.id, accountId)),
    // What the checks look at, for a payment that could not be made.
    buyer: db.select().from(counterparties).where(and(inAccount(counterparties, accountId), eq(counterparties.id, buyerId))),
    supplier: db.select().from(counterparties).where(and(inAccount(counterparties, accountId), eq(counterparties.id, supplierId))),
    found: db.select().from(invoices).where(and(inAccount(invoices, accountId), inList(invoices.id, ids))),
    claimed: db
      .select({ invoiceId: paymentInvoices.invoiceId, paymentId: paymentInvoices.paymentId })
      .from(paymentInvoices)
      .where(and(inList(paymentInvoices.invoiceId, ids), invoiceClaimed))
      .limit(fixedLimit(1)),
  });
  const [made] = batch.insert;
  if (!made) {
    checkPaymentInput(input, batch.buyer[0], batch.supplier[0], batch.found);
    const [claimed] = batch.claimed;
    if (claimed) throw conflict(`Invoice ${claimed.invoiceId} already belongs to payment ${claimed.paymentId}.`);
    throw new Error(`a payment that passed its checks was not made (account ${accountId})`);
  }
  return {
    detail: JSON.parse(made.detail!) as PaymentView,
    stamp: made.updatedAt,
    countedTo: batch.mark[0]?.mark ?? 0,
    deliveryIds: batch.outbox.filter((row) => row.status === "pending").map((row) => row.id),
  };
}
