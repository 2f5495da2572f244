/**
 * The payment lifecycle (docs/interface.md, "Payment lifecycle"), stated once: which status may
 * follow which (NEXT_STATUSES), how many events a payment takes (MAX_EVENTS), and what an event
 * does to the payment row (`applyEvent`, with what it changes listed in db/payment-detail.ts's
 * EVENT_CHANGES). The SQL the event's batch runs is made from the same statements (`allowedSql`,
 * `eventSetSql`), so the two cannot drift; test/services/event-write.test.ts runs both.
 */
import { sql, type SQL } from "drizzle-orm";
import { changesOf } from "../../db/payment-detail";
import { PAYMENT_STATUSES, payments, type PaymentMethod, type PaymentStatus, type paymentEvents } from "../../db/schema";
import { conflict, invalidField, type AppError } from "../../errors";

/** Every move not listed here is refused. */
export const NEXT_STATUSES: Record<PaymentStatus, readonly PaymentStatus[]> = {
  pending: ["in-progress", "canceled", "failed"],
  "in-progress": ["settled", "canceled", "failed"],
  settled: ["refunded"],
  canceled: [],
  failed: [],
  refunded: [],
};

export function canMove(from: PaymentStatus, to: PaymentStatus): boolean {
  return NEXT_STATUSES[from].includes(to);
}

/** A canceled or failed payment lets go of its invoices, so a new payment may cover them. */
export function releasesInvoices(status: PaymentStatus): boolean {
  return status === "canceled" || status === "failed";
}

/**
 * A payment's events, its creation included, are at most this many. Real payments have a handful;
 * the cap keeps the detail, which lists every event and is every webhook body's `object`, well
 * under D1's 2 MB row limit whatever the events say (1,000-character descriptions, escaped).
 */
export const MAX_EVENTS = 100;

export interface PaymentEventFields {
  event_code: string;
  description: string;
  status?: PaymentStatus;
  instrument_number?: string | null;
  refund_reason?: string | null;
}

export interface PaymentFields {
  originating_counterparty_id: string;
  receiving_counterparty_id: string;
  invoice_ids: string[];
  payment_method: PaymentMethod;
}

/** A payment row as the lifecycle sees it (its stored detail is derived from it by the write). */
export type PaymentRow = Omit<typeof payments.$inferSelect, "detail" | "writeToken">;
export type EventRow = typeof paymentEvents.$inferSelect;

/**
 * Why the lifecycle refuses `input` on a payment in `status` with `version` (a 409 to throw), or
 * null when it allows it. Pure. The version counts the payment's events: its creation is 1 and
 * every event adds one.
 */
export function eventRefusal(payment: { status: PaymentStatus; version: number }, input: PaymentEventFields): AppError | null {
  if (payment.version >= MAX_EVENTS) return conflict(`A payment has at most ${MAX_EVENTS} events.`);
  if (input.status && !canMove(payment.status, input.status)) return conflict(`A payment cannot move from ${payment.status} to ${input.status}.`);
  return null;
}

/** A refund needs its reason, and only a refund takes one: a 400 before anything is written. Pure. */
export function checkEventInput(input: PaymentEventFields): void {
  if (input.status === "refunded" && !input.refund_reason) {
    throw invalidField("refund_reason", "This field is required when status is refunded.");
  }
  if (input.status !== "refunded" && input.refund_reason != null) {
    throw invalidField("refund_reason", "A refund reason is only accepted with status refunded.");
  }
}

/** What an event's write brings: its id and the stamp the batch took. */
export interface EventStamp {
  eventId: string;
  at: number;
}

/**
 * The next payment row and the event's row, for one event on `payment`: the event changes what
 * EVENT_CHANGES says it names, adds one to the version and stamps `updated`; its row records the
 * payment as it leaves it. A move the lifecycle forbids, or an event past MAX_EVENTS, throws its
 * 409. Pure: the readable statement of what event-write.ts's batch does in SQL.
 */
export function applyEvent(payment: PaymentRow, input: PaymentEventFields, stamp: EventStamp): { next: PaymentRow; event: EventRow } {
  const refused = eventRefusal(payment, input);
  if (refused) throw refused;
  const next: PaymentRow = { ...payment, ...changedColumns(input), version: payment.version + 1, updatedAt: stamp.at };
  const event: EventRow = {
    id: stamp.eventId,
    paymentId: payment.id,
    seq: next.version,
    eventCode: input.event_code,
    status: next.status,
    description: input.description,
    instrumentNumber: next.instrumentNumber,
    refundReason: next.refundReason,
    createdAt: stamp.at,
  };
  return { next, event };
}

/** The payment row's columns an event changes, with their new values (EVENT_CHANGES). Pure. */
function changedColumns(input: PaymentEventFields): Partial<Pick<PaymentRow, "status" | "instrumentNumber" | "refundReason">> {
  return Object.fromEntries(changesOf(input).map((change) => [change.column, change.value(input)]));
}

/** `eventRefusal`'s allowance as SQL over the payment row the statement updates: the cap, and the status table. */
export function allowedSql(input: PaymentEventFields): SQL {
  const from = input.status ? PAYMENT_STATUSES.filter((status) => canMove(status, input.status!)) : null;
  const move = from === null ? sql`1` : from.length === 0 ? sql`0` : sql`${payments.status} in ${from}`;
  return sql`${payments.version} < ${MAX_EVENTS} and ${move}`;
}

/** `applyEvent`'s next row as the SET of an UPDATE of the payment row: the columns the event changes, the version, the stamp. */
export function eventSetSql(input: PaymentEventFields, stamp: SQL) {
  return { ...changedColumns(input), version: sql`${payments.version} + 1`, updatedAt: stamp } as {
    status?: PaymentStatus;
    instrumentNumber?: string | null;
    refundReason?: string | null;
    version: SQL;
    updatedAt: SQL;
  };
}
