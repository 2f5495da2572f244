import type { PaymentMethod, PaymentStatus } from "../../db/schema";
import { conflict, type AppError } from "../../errors";
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
 * Why the lifecycle refuses `input` on a payment in `status` with `version` (a 409 to throw), or
 * null when it allows it. Pure. The version counts the payment's events: its creation is 1 and
 * every event adds one.
 */
export function eventRefusal(payment: { status: PaymentStatus; version: number }, input: PaymentEventInput): AppError | null {
  if (payment.version >= MAX_EVENTS) return conflict(`A payment has at most ${MAX_EVENTS} events.`);
  if (input.status && !canMove(payment.status, input.status)) return conflict(`A payment cannot move from ${payment.status} to ${input.status}.`);
  return null;
}
