import type { DetailInvoiceRow } from "../../src/db/payment-detail";
import type { EventRow, EventStamp, PaymentFields, PaymentRow } from "../../src/services/payments/lifecycle";

/**
 * A new payment's row and first event in plain TypeScript: what the SQL of
 * src/services/payments/new-payment.ts must write (test/services/payment-sql.test.ts). An event's
 * rules are src/services/payments/lifecycle.ts's `applyEvent`.
 */

/**
 * A new payment and its first event, for checked input and its invoices (in request order). Pure.
 * The amount is the invoices' sum, in their currency.
 */
export function newPayment(
  accountId: string,
  paymentId: string,
  input: PaymentFields,
  invoices: (DetailInvoiceRow & { currency: string })[],
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
