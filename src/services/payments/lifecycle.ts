import type { PaymentMethod, PaymentStatus } from "../../db/schema";
import { conflict } from "../../errors";
import { canMove } from "./status";
import type { EventRow, PaymentInvoiceRow, PaymentRow } from "./view";

export interface PaymentEventInput {
  event_code: string;
  description: string;
  status?: PaymentStatus;
  instrument_number?: string | null;
  refund_reason?: string | null;
}

export interface CreatePaymentInput {
  originating_counterparty_id: string;
  receiving_counterparty_id: string;
  invoice_ids: string[];
  payment_method: PaymentMethod;
}

/**
 * A payment's events, its creation included, are at most this many. Real payments have a handful;
 * the cap keeps the detail, which lists every event and is every webhook body's `object`, well
 * under D1's 2 MB row limit whatever the events say (1,000-character descriptions, escaped).
 */
export const MAX_EVENTS = 100;

/** What a write brings that the pure step cannot make itself: fresh ids and the write's stamp. */
export interface EventStamp {
  eventId: string;
  writeToken: string;
  at: number;
}

/**
 * A new payment and its first event, for checked input and its invoices (in request order). Pure.
 * The amount is the invoices' sum, in their currency.
 */
export function newPayment(
  accountId: string,
  paymentId: string,
  input: CreatePaymentInput,
  invoices: (PaymentInvoiceRow & { currency: string })[],
  stamp: EventStamp,
): { payment: PaymentRow; event: EventRow } {
  const payment: PaymentRow = {
    id: paymentId,
    accountId,
    originatingCounterpartyId: input.originating_counterparty_id,
    receivingCounterpartyId: input.receiving_counterparty_id,
    amountCents: invoices.reduce((sum, invoice) => sum + invoice.amountCents, 0),
    currency: invoices[0]!.currency,
    paymentMethod: input.payment_method,
    status: "pending",
    instrumentNumber: null,
    refundReason: null,
    version: 1,
    writeToken: stamp.writeToken,
    createdAt: stamp.at,
    updatedAt: stamp.at,
  };
  const event: EventRow = {
    id: stamp.eventId,
    paymentId,
    seq: 1,
    eventCode: "PU00",
    status: "pending",
    description: "Payment created",
    instrumentNumber: null,
    refundReason: null,
    createdAt: stamp.at,
  };
  return { payment, event };
}

/**
 * The next payment row and its event, for one event on `payment`. Pure. An event changes only what
 * it names: without `status` the status stays, without `instrument_number` the instrument stays,
 * and `refund_reason` is set only by the move to refunded (and kept by every later event).
 * A move the lifecycle forbids, or an event past MAX_EVENTS, throws 409 and changes nothing.
 */
export function applyEvent(payment: PaymentRow, input: PaymentEventInput, stamp: EventStamp): { next: PaymentRow; event: EventRow } {
  // The version counts the payment's events: its creation is 1 and every event adds one.
  if (payment.version >= MAX_EVENTS) throw conflict(`A payment has at most ${MAX_EVENTS} events.`);
  if (input.status && !canMove(payment.status, input.status)) {
    throw conflict(`A payment cannot move from ${payment.status} to ${input.status}.`);
  }
  const status = input.status ?? payment.status;
  const next: PaymentRow = {
    ...payment,
    status,
    instrumentNumber: input.instrument_number !== undefined ? input.instrument_number : payment.instrumentNumber,
    refundReason: input.status === "refunded" ? (input.refund_reason ?? null) : payment.refundReason,
    version: payment.version + 1,
    writeToken: stamp.writeToken,
    updatedAt: stamp.at,
  };
  const event: EventRow = {
    id: stamp.eventId,
    paymentId: payment.id,
    seq: next.version,
    eventCode: input.event_code,
    status,
    description: input.description,
    instrumentNumber: next.instrumentNumber,
    refundReason: next.refundReason,
    createdAt: stamp.at,
  };
  return { next, event };
}
