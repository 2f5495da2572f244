/**
 * The payment write fence.
 *
 * Protocol: a payment write is one D1 batch. Its first statement writes the payment row with a
 * fresh write token; a new payment's applies only if the row does not exist yet, an event's only
 * where the lifecycle allows it on the row as it is then (event-write.ts, which writes events).
 * Every later statement of the batch (the event, the invoice links, and the webhook outbox's
 * delivery rows) runs only if the payment row carries the new token at that point of the batch.
 * So the delivery rows exist iff the payment row carries our write token: a change is never
 * committed without its deliveries, nor deliveries without their change, and a write that did not
 * apply leaves nothing.
 *
 * The stamp (`updated`, and the event's `created`) is taken inside the first statement: one ms
 * above every stamp of the account, or now if later. D1 runs batches one at a time, so stamps
 * rise in commit order and `updated__gt` polling never misses a write committed after a poll,
 * with no conflict between concurrent writes of the account. Everything else that carries the
 * stamp reads it back from the payment row: the event and the delivery rows. The payment's stored
 * detail (which lists read whole) is written by the first statement itself, rendered once with a
 * placeholder stamp that SQL replaces with the same stamp (db/stamped-text). The delivery rows
 * keep no body: each is rebuilt from that detail as its event left it (webhooks/outbox/bodies.ts).
 * The payment counts are not written here: they count the payments and events after their mark
 * (services/payment-counts), and the batch reads the mark back so the caller can ask for a fold.
 */
import { eq, sql, type SQL } from "drizzle-orm";
import { runBatch, type BatchStatement, type Db } from "../../db/client";
import { guardedInsert } from "../../db/guarded-insert";
import { stampedJson } from "../../db/stamped-text";
import { paymentEvents, paymentInvoices, payments, tenants } from "../../db/schema";
import { outboxStatements, type Subscriber } from "../../webhooks";
import { countedTo } from "../payment-counts";
import { paymentView, type EventRow, type PaymentInvoiceRow, type PaymentRow, type PaymentView } from "./view";

/** A new payment with its invoices and first event. */
export interface PaymentChange {
  /** The payment row as the write leaves it, with a fresh write token; its stamps are replaced. */
  next: PaymentRow;
  /** The event the write adds. */
  event: EventRow;
  /** Its invoices, as its detail lists them. */
  invoices: PaymentInvoiceRow[];
}

/**
 * A payment write's stamp, as SQL read in its first statement: one ms above every stamp of the
 * account, or `now` if later.
 */
export function newStamp(accountId: string, now: number): SQL {
  return sql`max(${now}, coalesce((select max(p.updated_at) from ${payments} p where p.account_id = ${accountId}), 0) + 1)`;
}

/** What a write's answer may be made of, as SQL over the batch's rows: the stored detail and the stamp, under the write's guard. */
export interface WrittenSql {
  detail: SQL;
  stamp: SQL;
  guard: SQL;
}

/**
 * Writes one payment change with its outbox rows for `subscribers`, and the statements `also`
 * makes (a keyed request's answer). Returns the detail as written and the delivery ids to hand
 * to the queue, or null when another write changed the payment first (nothing was written; read
 * again and retry). A new payment whose invoice another payment claimed meanwhile fails on the
 * claim's unique index, and nothing is written either.
 */
export async function commitPaymentChange(
  db: Db,
  change: PaymentChange,
  subscribers: Subscriber[],
  also: (written: WrittenSql) => Promise<BatchStatement[]> = async () => [],
): Promise<{ detail: PaymentView; stamp: number; countedTo: number; deliveryIds: string[] } | null> {
  const { next, event } = change;
  const accountId = next.accountId;
  const now = Date.now();
  const stampedAt = newStamp(accountId, now);
  const applied = sql`exists (select 1 from ${payments} p where p.id = ${next.id} and p.write_token = ${next.writeToken})`;
  const stamp = sql`(select p.updated_at from ${payments} p where p.id = ${next.id} and p.write_token = ${next.writeToken})`;
  const at = (ms: number): PaymentView => paymentView({ ...next, createdAt: ms, updatedAt: ms }, change.invoices, [{ ...event, createdAt: ms }]);
  const payment = {
    status: next.status,
    originating_counterparty_id: next.originatingCounterpartyId,
    receiving_counterparty_id: next.receivingCounterpartyId,
    payment_method: next.paymentMethod,
    amount_cents: next.amountCents,
  };
  const outbox = outboxStatements(db, { accountId, paymentId: next.id, version: next.version, payment, guard: applied, stamp }, subscribers, now);

  const write = guardedInsert(db, payments, { ...next, createdAt: stampedAt, updatedAt: stampedAt, detail: stampedJson(at, stampedAt) }, sql`1`).returning({ updatedAt: payments.updatedAt });

  const statements: BatchStatement[] = [
    write,
    guardedInsert(db, paymentEvents, { ...event, createdAt: stamp }, applied),
    ...linkStatements(db, next, change.invoices, applied),
    ...outbox.statements,
    ...(await also({ detail: sql`(select p.detail from ${payments} p where p.id = ${next.id} and p.write_token = ${next.writeToken})`, stamp, guard: applied })),
    db.select({ mark: countedTo(accountId).mapWith(Number) }).from(tenants).where(eq(tenants.id, accountId)),
  ];
  const results = await runBatch(db, statements);
  const [written] = results as [{ updatedAt: number }[], ...unknown[]];
  const [mark] = results[results.length - 1] as { mark: number }[];
  const row = written[0];
  return row ? { detail: at(row.updatedAt), stamp: row.updatedAt, countedTo: mark?.mark ?? 0, deliveryIds: outbox.deliveryIds } : null;
}

/** A new payment's invoice claims. */
function linkStatements(db: Db, payment: PaymentRow, invoices: PaymentInvoiceRow[], applied: SQL): BatchStatement[] {
  return invoices.map((invoice) =>
    guardedInsert(
      db,
      paymentInvoices,
      { invoiceId: invoice.id, claim: "", paymentId: payment.id, invoiceNumber: invoice.invoiceNumber, amountCents: invoice.amountCents, invoiceCreatedAt: invoice.createdAt },
      applied,
    ),
  );
}
