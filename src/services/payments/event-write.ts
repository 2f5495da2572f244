/**
 * An event on a payment, written in one D1 batch that also decides it: no read before it.
 *
 * The batch's first statement moves the payment row, only where the lifecycle allows the event on
 * the row as it is then (`allowedSql`: the status table and the cap on events, as SQL). Its SET
 * computes the new row from the old one, and the new stored detail from the old detail: the
 * fields an event changes set in place, the event appended, with the stamp taken in the statement (one ms above every stamp of
 * the account, or now if later: write-fence.ts says why stamps rise in commit order). The row
 * then carries the write's fresh token, and every later statement runs only if it does
 * (`applied`): the event row, the invoices a cancel or failure lets go of, the outbox rows
 * (from the account's subscriptions, as they are then: webhooks/outbox), the key's answer. The
 * batch ends by reading back the payment's status and version: when the move did not apply, they
 * say whether the payment is missing (404) or the event refused (409, as `eventRefusal` words it).
 * D1 runs a database's batches one at a time, so events on one payment never race.
 */
import { and, eq, sql, type SQL } from "drizzle-orm";
import { runNamedBatch, type BatchStatement, type Db } from "../../db/client";
import { guardedInsert } from "../../db/guarded-insert";
import { inAccount } from "../../db/scope";
import { isoSql } from "../../db/stamped-text";
import { invoiceClaimed, paymentEvents, paymentInvoices, payments, PAYMENT_STATUSES, tenants, type PaymentStatus } from "../../db/schema";
import { notFound } from "../../errors";
import { outboxOfChange } from "../../webhooks";
import { countedTo } from "../counts";
import { eventRefusal, MAX_EVENTS, type PaymentEventFields } from "./lifecycle";
import { canMove, releasesInvoices } from "./status";
import { jsonOf, paymentWrite } from "./write-fence";
import type { EventRow } from "./view";

export interface WrittenEvent {
  event: EventRow;
  /** The deliveries to hand to the queue (their subscriptions were active). */
  deliveryIds: string[];
  countedTo: number;
}

/** Whether the lifecycle allows `input` on the payment row as the statement sees it, as SQL. */
function allowedSql(input: PaymentEventFields): SQL {
  const from = input.status ? PAYMENT_STATUSES.filter((status) => canMove(status, input.status!)) : null;
  const move = from === null ? sql`1` : from.length === 0 ? sql`0` : sql`${payments.status} in ${from}`;
  return sql`${payments.version} < ${MAX_EVENTS} and ${move}`;
}

/**
 * Writes one event on `paymentId` of `accountId` with its outbox rows, and the statements `answer`
 * makes of the event's JSON (a keyed request's answer). Throws 404 when the account has no such
 * payment, 409 when the lifecycle refuses the event.
 */
export async function commitEvent(
  db: Db,
  accountId: string,
  paymentId: string,
  input: PaymentEventFields,
  answer: (eventJson: SQL, applied: SQL) => Promise<BatchStatement[]>,
): Promise<WrittenEvent> {
  const { now, eventId, token, stamp, at, written, applied, p } = paymentWrite(accountId, paymentId);
  const to: PaymentStatus | null = input.status ?? null;
  const status = to === null ? sql`${payments.status}` : sql`${to}`;
  const instrument = input.instrument_number !== undefined ? sql`${input.instrument_number}` : sql`${payments.instrumentNumber}`;
  const refund = to === "refunded" ? sql`${input.refund_reason ?? null}` : sql`${payments.refundReason}`;
  // The event's texts go into the detail as JSON that JavaScript wrote (as every answer does),
  // so that any text a JSON body may carry (a lone surrogate) reads the same in both (jsonOf).
  const eventJson = (statusOf: SQL, createdAt: SQL) =>
    sql`json_object('id', ${eventId}, 'event_code', ${jsonOf(input.event_code)}, 'status', ${statusOf}, 'description', ${jsonOf(input.description)}, 'created', ${createdAt})`;
  // The detail changes only where the event does: what it does not name stays as stored.
  const changes = [
    ...(to === null ? [] : [sql`'$.status', ${to}`]),
    ...(input.instrument_number !== undefined ? [sql`'$.instrument_number', ${jsonOf(input.instrument_number)}`] : []),
    ...(to === "refunded" ? [sql`'$.refund_reason', ${jsonOf(input.refund_reason ?? null)}`] : []),
    sql`'$.version', ${payments.version} + 1`,
    sql`'$.updated', ${at}`,
  ];
  const detail = sql`json_insert(json_set(${payments.detail}, ${sql.join(changes, sql`, `)}), '$.events[#]', ${eventJson(status, at)})`;

  const move = db
    .update(payments)
    .set({ status: status as SQL<PaymentStatus>, instrumentNumber: instrument, refundReason: refund, version: sql`${payments.version} + 1`, writeToken: token, updatedAt: stamp, detail })
    .where(and(inAccount(payments, accountId), eq(payments.id, paymentId), allowedSql(input)))
    .returning({ status: payments.status, version: payments.version, instrumentNumber: payments.instrumentNumber, refundReason: payments.refundReason, updatedAt: payments.updatedAt });
  const event = guardedInsert(
    db,
    paymentEvents,
    { id: eventId, paymentId, seq: p("version"), eventCode: input.event_code, status: p("status"), description: input.description, instrumentNumber: p("instrument_number"), refundReason: p("refund_reason"), createdAt: p("updated_at") },
    written,
    sql`${payments} p`,
  );
  // The answer, as the payment row the move left reads (on its key: the events have none on their id).
  const storedEvent = sql`(select ${eventJson(p("status"), isoSql(p("updated_at")))} from ${payments} p where ${written})`;
  const releases = to !== null && releasesInvoices(to) ? releaseStatements(db, paymentId, applied) : [];
  const batch = await runNamedBatch(db, {
    move,
    event,
    releases,
    outbox: outboxOfChange(db, { accountId, paymentId, applied: sql`${written}` }, now),
    answer: await answer(storedEvent, applied),
    mark: db.select({ mark: countedTo(accountId).mapWith(Number) }).from(tenants).where(eq(tenants.id, accountId)),
    after: db.select({ status: payments.status, version: payments.version }).from(payments).where(and(inAccount(payments, accountId), eq(payments.id, paymentId))),
  });
  const [moved] = batch.move;
  if (!moved) {
    const [after] = batch.after;
    if (!after) throw notFound();
    throw eventRefusal(after, input) ?? new Error(`an event on ${paymentId} that the lifecycle allows did not apply`);
  }
  return {
    event: {
      id: eventId,
      paymentId,
      seq: moved.version,
      eventCode: input.event_code,
      status: moved.status,
      description: input.description,
      instrumentNumber: moved.instrumentNumber,
      refundReason: moved.refundReason,
      createdAt: moved.updatedAt,
    },
    deliveryIds: batch.outbox.filter((row) => row.status === "pending").map((row) => row.id),
    countedTo: batch.mark[0]?.mark ?? 0,
  };
}

/**
 * The invoices a cancel or failure lets go of: the links that claim them for this payment (found by
 * the invoice ids its stored detail lists), each made again with the payment's id as its claim,
 * and the claiming one removed, only when the move applied. A payment already let go holds no
 * claiming link, so this changes nothing then. (Not an UPDATE of the key: a move logs a row's key as
 * it is after a change, and the old key must be logged too.)
 */
function releaseStatements(db: Db, paymentId: string, applied: SQL): BatchStatement[] {
  const links = paymentInvoices;
  const listed = sql`(select json_extract(value, '$.id') from json_each((select p.detail from ${payments} p where p.id = ${paymentId}), '$.invoices'))`;
  const held = and(sql`${links.invoiceId} in ${listed}`, invoiceClaimed, eq(links.paymentId, paymentId), applied);
  return [
    db.insert(links).select(
      db
        .select({
          invoiceId: links.invoiceId,
          claim: sql<string>`${paymentId}`.as("claim"),
          paymentId: links.paymentId,
          invoiceNumber: links.invoiceNumber,
          amountCents: links.amountCents,
          invoiceCreatedAt: links.invoiceCreatedAt,
        })
        .from(links)
        .where(held),
    ),
    db.delete(links).where(held),
  ];
}
