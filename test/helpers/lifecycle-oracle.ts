import { eventRefusal, MAX_EVENTS, type PaymentFields, type PaymentEventFields } from "../../src/services/payments/lifecycle";
import { eventView, type EventRow, type PaymentInvoiceRow, type PaymentRow, type PaymentView } from "../../src/services/payments/view";

/**
 * The lifecycle's rules for a new payment and for one event, in plain TypeScript: what the SQL of
 * src/services/payments/write-fence.ts and event-write.ts must do to the payment row and its
 * stored detail. Tests check the one against the other (test/services/payment-sql.test.ts,
 * test/services/event-write.test.ts).
 */
export { MAX_EVENTS };

/** What an event's write brings: its id and the stamp the batch took. */
export interface EventStamp {
  eventId: string;
  at: number;
}

/**
 * The next payment row and its event, for one event on `payment`. An event changes only what it
 * names: without `status` the status stays, without `instrument_number` the instrument stays, and
 * `refund_reason` is set only by the move to refunded (and kept by every later event). A move the
 * lifecycle forbids, or an event past MAX_EVENTS, throws its 409.
 */
export function applyEvent(payment: PaymentRow, input: PaymentEventFields, stamp: EventStamp): { next: Omit<PaymentRow, "writeToken">; event: EventRow } {
  const refused = eventRefusal(payment, input);
  if (refused) throw refused;
  const { writeToken: _token, ...kept } = payment;
  const status = input.status ?? payment.status;
  const next = {
    ...kept,
    status,
    instrumentNumber: input.instrument_number !== undefined ? input.instrument_number : payment.instrumentNumber,
    refundReason: input.status === "refunded" ? (input.refund_reason ?? null) : payment.refundReason,
    version: payment.version + 1,
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

/** The detail after one event, from the detail before it: the fields an event changes, the event appended, the new `updated`. */
export function detailAfter(shown: PaymentView, next: Omit<PaymentRow, "writeToken">, event: EventRow): PaymentView {
  return {
    ...shown,
    status: next.status,
    instrument_number: next.instrumentNumber,
    events: [...shown.events, eventView(event)],
    refund_reason: next.refundReason,
    version: next.version,
    updated: new Date(next.updatedAt).toISOString(),
  };
}

/**
 * A new payment and its first event, for checked input and its invoices (in request order). Pure.
 * The amount is the invoices' sum, in their currency.
 */
export function newPayment(
  accountId: string,
  paymentId: string,
  input: PaymentFields,
  invoices: (PaymentInvoiceRow & { currency: string })[],
  stamp: EventStamp & { writeToken: string },
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
