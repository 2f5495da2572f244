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
import type { Keyed, KeyedWrite } from "../../idempotency";
import { guardedInsert } from "../../db/guarded-insert";
import { inAccount } from "../../db/scope";
import { isoSql } from "../../db/stamped-text";
import { liveLink, paymentEvents, paymentInvoices, payments, type PaymentStatus } from "../../db/schema";
import { notFound } from "../../errors";
import { outboxOfChange, toSend, type Trace } from "../../webhooks";
import { selectCountedTo } from "../counts";
import { allowedSql, eventRefusal, eventSetSql, releasesInvoices, type EventRow, type PaymentEventFields } from "./lifecycle";
import { paymentWrite } from "./write-fence";
import { detailChangesSql, eventSql, jsonOf } from "../../db/payment-detail";

export interface WrittenEvent {
  event: EventRow;
  /** The deliveries to hand to the queue (their subscriptions were active). */
  deliveryIds: string[];
  countedTo: number;
}

/**
 * Writes one event on `paymentId` of `accountId` with its outbox rows, and the key's parts
 * (`keyed`: its claim, and its answer, the event's JSON), its deliveries carrying `trace`; what the key decided instead, as a value,
 * when it is another request's. Throws 404 when the account has no such payment, 409 when the
 * lifecycle refuses the event.
 */
export async function commitEvent(
  db: Db,
  accountId: string,
  paymentId: string,
  input: PaymentEventFields,
  keyed: KeyedWrite<SQL>,
  trace: Trace,
): Promise<Keyed<WrittenEvent>> {
  const { now, eventId, token, stamp, at, written, applied, p } = paymentWrite(accountId, paymentId);
  const to: PaymentStatus | null = input.status ?? null;
  // The event's texts go into the detail as JSON that JavaScript wrote (as every answer does),
  // so that any text a JSON body may carry (a lone surrogate) reads the same in both (jsonOf).
  const eventJson = (status: SQL, created: SQL) =>
    eventSql({ id: sql`${eventId}`, event_code: jsonOf(input.event_code), status, description: jsonOf(input.description), created });
  // The row and its detail change only where the event does (lifecycle.ts, db/payment-detail.ts).
  const set = eventSetSql(input, stamp);
  const detail = detailChangesSql(sql`${payments.detail}`, input, {
    version: sql`${payments.version} + 1`,
    updated: at,
    event: eventJson(sql`${to ?? payments.status}`, at),
  });
  const move = db
    .update(payments)
    .set({ ...set, writeToken: token, detail })
    .where(and(keyed.owns, inAccount(payments, accountId), eq(payments.id, paymentId), allowedSql(input)))
    .returning({
      status: payments.status,
      version: payments.version,
      instrumentNumber: payments.instrumentNumber,
      refundReason: payments.refundReason,
      updatedAt: payments.updatedAt,
    });
  // The event's row records the payment as the move left it (lifecycle.ts `applyEvent`).
  const event = guardedInsert(
    db,
    paymentEvents,
    {
      id: eventId,
      paymentId,
      seq: sql`${p.version}`,
      eventCode: input.event_code,
      status: sql`${p.status}`,
      description: input.description,
      instrumentNumber: sql`${p.instrumentNumber}`,
      refundReason: sql`${p.refundReason}`,
      createdAt: sql`${p.updatedAt}`,
    },
    written,
    p.from,
  );
  // The answer, as the payment row the move left reads (on its key: the events have none on their id).
  const storedEvent = sql`(select ${eventJson(sql`${p.status}`, isoSql(sql`${p.updatedAt}`))} from ${p.from} where ${written})`;
  const releases = to !== null && releasesInvoices(to) ? releaseStatements(db, paymentId, applied) : [];
  const batch = await runNamedBatch(db, {
    key: keyed.claim,
    move,
    event,
    releases,
    outbox: outboxOfChange(db, { accountId, paymentId, payment: p, applied: written, trace }, now),
    answer: await keyed.answer(storedEvent, applied),
    mark: selectCountedTo(db, accountId),
    after: selectPaymentState(db, accountId, paymentId),
  });
  const decided = keyed.decided(batch.key);
  if (decided) return { decided };
  const [moved] = batch.move;
  if (!moved) {
    const [after] = batch.after;
    if (!after) throw notFound();
    throw eventRefusal(after, input) ?? new Error(`an event on ${paymentId} that the lifecycle allows did not apply`);
  }
  return {
    ran: {
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
      deliveryIds: toSend(batch.outbox),
      countedTo: batch.mark[0]?.mark ?? 0,
    },
  };
}

/**
 * The invoices a cancel or failure lets go of: this payment's live links (found by the invoice ids
 * its stored detail lists), each made again with the payment's id as its released_by, and the live
 * one removed, only when the move applied. A payment already let go has no live link, so this
 * changes nothing then. (Not an UPDATE of the key: a move logs a row's key as
 * it is after a change, and the old key must be logged too.)
 */
function releaseStatements(db: Db, paymentId: string, applied: SQL): BatchStatement[] {
  const links = paymentInvoices;
  const listed = sql`(select json_extract(value, '$.id') from json_each((select ${payments.detail} from ${payments} where ${payments.id} = ${paymentId}), '$.invoices'))`;
  const released = and(sql`${links.invoiceId} in ${listed}`, liveLink, eq(links.paymentId, paymentId), applied);
  return [
    db.insert(links).select(
      db
        .select({
          invoiceId: links.invoiceId,
          releasedBy: sql<string>`${paymentId}`.as("released_by"),
          paymentId: links.paymentId,
          invoiceNumber: links.invoiceNumber,
          amountCents: links.amountCents,
          invoiceCreatedAt: links.invoiceCreatedAt,
        })
        .from(links)
        .where(released),
    ),
    db.delete(links).where(released),
  ];
}

/** Reads the account's payment's status and version: why an event that did not apply was refused. */
export function selectPaymentState(db: Db, accountId: string, paymentId: string) {
  return db
    .select({ status: payments.status, version: payments.version })
    .from(payments)
    .where(and(inAccount(payments, accountId), eq(payments.id, paymentId)));
}
