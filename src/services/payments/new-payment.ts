/**
 * A new payment, written in one D1 batch that also decides it (write-fence.ts states the
 * protocol): its row where every creation check holds (creation.ts), with its detail as SQL's
 * JSON (db/payment-detail.ts); then, under the write's token, its first event, its invoice
 * links, its outbox rows and the key's answer (the key's claim leads the batch, and the row
 * requires it: idempotency/keyed.ts). A payment not made reads back each check's
 * verdict and answers the failing ones' refusals: a 400 or a 409, never a 500.
 */
import { and, eq, sql, type SQL } from "drizzle-orm";
import { aliased } from "../../db/aliased";
import { runNamedBatch, type Db } from "../../db/client";
import type { Keyed, KeyedWrite } from "../../idempotency";
import { fixedLimit } from "../../db/fixed-limit";
import { guardedInsert } from "../../db/guarded-insert";
import { inList } from "../../db/in-list";
import { detailSql, eventSql, invoiceSql, jsonOf, type PaymentView } from "../../db/payment-detail";
import { inAccount } from "../../db/scope";
import { liveLink, invoices, paymentEvents, paymentInvoices, payments, tenants } from "../../db/schema";
import { newId } from "../../lib/ids";
import { outboxOfChange, toSend, type Trace } from "../../webhooks";
import { selectCountedTo } from "../counts";
import { selectCounterparty } from "../counterparties";
import { checksHoldSql, creationSql, NO_VERDICT, refusalOf, verdictSql } from "./creation";
import type { PaymentFields } from "./lifecycle";
import { paymentWrite } from "./write-fence";

export interface NewPayment {
  detail: PaymentView;
  stamp: number;
  countedTo: number;
  /** The deliveries to hand to the queue (their subscriptions were active). */
  deliveryIds: string[];
}

/**
 * Writes a new payment of `accountId` for `input`, with its first event, its invoice links and
 * its outbox rows (carrying `trace`), and the key's parts (`keyed`: its claim, and its answer, the stored detail). What
 * the key decided instead, as a value, when it is another request's. Throws the failing checks'
 * 400 or 409 when it cannot be made; then nothing is written.
 */
export async function commitNewPayment(db: Db, accountId: string, input: PaymentFields, keyed: KeyedWrite<SQL>, trace: Trace): Promise<Keyed<NewPayment>> {
  const paymentId = newId("pmt");
  const { now, eventId, token, stamp, at, p, written, applied } = paymentWrite(accountId, paymentId);
  const checks = creationSql(accountId, input);
  const { i, named } = checks;
  const amount = sql`(select sum(${i.amountCents}) from ${named})`;
  const currency = sql`(select ${i.currency} from ${named} limit 1)`;
  // Its invoices oldest first, as the detail lists them.
  const invoiceList = sql`(select json_group_array(${invoiceSql({ id: sql`${i.id}`, invoice_number: sql`${i.invoiceNumber}`, amount_cents: sql`${i.amountCents}` })} order by ${i.createdAt}, ${i.id}) from ${named})`;
  const firstEvent = { event_code: "PU00", status: "pending", description: "Payment created" } as const;
  const detail = detailSql({
    id: sql`${paymentId}`,
    originating_counterparty_id: jsonOf(input.originating_counterparty_id),
    receiving_counterparty_id: jsonOf(input.receiving_counterparty_id),
    invoices: sql`json(${invoiceList})`,
    amount_cents: amount,
    currency,
    payment_method: sql`${input.payment_method}`,
    status: sql`${firstEvent.status}`,
    instrument_number: sql`null`,
    events: sql`json_array(${eventSql({ id: sql`${eventId}`, event_code: sql`${firstEvent.event_code}`, status: sql`${firstEvent.status}`, description: sql`${firstEvent.description}`, created: at })})`,
    refund_reason: sql`null`,
    version: sql`1`,
    created: at,
    updated: at,
  });

  const insert = guardedInsert(
    db,
    payments,
    {
      id: paymentId,
      accountId,
      originatingCounterpartyId: input.originating_counterparty_id,
      receivingCounterpartyId: input.receiving_counterparty_id,
      amountCents: amount,
      currency,
      paymentMethod: input.payment_method,
      status: firstEvent.status,
      instrumentNumber: null,
      refundReason: null,
      version: 1,
      writeToken: token,
      createdAt: stamp,
      updatedAt: stamp,
      detail,
    },
    sql`${keyed.owns} and ${checksHoldSql(checks)}`,
  ).returning({ updatedAt: payments.updatedAt, detail: payments.detail });
  const event = guardedInsert(
    db,
    paymentEvents,
    {
      id: eventId,
      paymentId,
      seq: 1,
      eventCode: firstEvent.event_code,
      status: firstEvent.status,
      description: firstEvent.description,
      instrumentNumber: null,
      refundReason: null,
      createdAt: sql`${p.updatedAt}`,
    },
    written,
    p.from,
  );
  const linked = aliased(invoices, "linked");
  const links = guardedInsert(
    db,
    paymentInvoices,
    {
      invoiceId: sql`${linked.id}`,
      releasedBy: "",
      paymentId,
      invoiceNumber: sql`${linked.invoiceNumber}`,
      amountCents: sql`${linked.amountCents}`,
      invoiceCreatedAt: sql`${linked.createdAt}`,
    },
    sql`${linked.id} in (select value from json_each(${JSON.stringify(input.invoice_ids)})) and +${linked.accountId} = ${accountId} and ${applied}`,
    linked.from,
  );
  const batch = await runNamedBatch(db, {
    key: keyed.claim,
    insert,
    event,
    links,
    outbox: outboxOfChange(db, { accountId, paymentId, payment: p, applied: written, trace }, now),
    answer: await keyed.answer(sql`(select ${p.detail} from ${p.from} where ${written})`, applied),
    mark: selectCountedTo(db, accountId),
    verdict: selectVerdict(db, accountId, checks),
    buyer: selectCounterparty(db, accountId, input.originating_counterparty_id),
    supplier: selectCounterparty(db, accountId, input.receiving_counterparty_id),
    found: selectInvoices(db, accountId, input.invoice_ids),
    live: selectLiveLink(db, input.invoice_ids),
  });
  const decided = keyed.decided(batch.key);
  if (decided) return { decided };
  const [made] = batch.insert;
  if (!made) {
    const read = { input, buyer: batch.buyer[0], supplier: batch.supplier[0], found: batch.found, live: batch.live };
    throw refusalOf(batch.verdict[0] ?? NO_VERDICT, read);
  }
  return {
    ran: {
      detail: JSON.parse(made.detail!) as PaymentView,
      stamp: made.updatedAt,
      countedTo: batch.mark[0]?.mark ?? 0,
      deliveryIds: toSend(batch.outbox),
    },
  };
}

/** Reads each creation check's verdict, and what its refusal names, for a payment that was not made (creation.ts). */
export function selectVerdict(db: Db, accountId: string, checks: Parameters<typeof verdictSql>[0]) {
  return db.select(verdictSql(checks)).from(tenants).where(eq(tenants.id, accountId));
}

/** Reads the account's invoices among `ids`. */
export function selectInvoices(db: Db, accountId: string, ids: readonly string[]) {
  return db
    .select()
    .from(invoices)
    .where(and(inAccount(invoices, accountId), inList(invoices.id, [...ids])));
}

/** Reads one live link of any invoice among `ids` (an invoice a payment holds), if there is one. */
export function selectLiveLink(db: Db, ids: readonly string[]) {
  return db
    .select({ invoiceId: paymentInvoices.invoiceId, paymentId: paymentInvoices.paymentId })
    .from(paymentInvoices)
    .where(and(inList(paymentInvoices.invoiceId, [...ids]), liveLink))
    .limit(fixedLimit(1));
}
