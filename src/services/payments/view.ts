import type { paymentEvents, payments } from "../../db/schema";
import { toIso } from "../../lib/time";

/** A payment row as the lifecycle sees it; its stored detail is derived from it by the write. */
export type PaymentRow = Omit<typeof payments.$inferSelect, "detail">;
export type EventRow = typeof paymentEvents.$inferSelect;
export interface PaymentInvoiceRow {
  id: string;
  invoiceNumber: string;
  amountCents: number;
  createdAt: number;
}

export function eventView(event: EventRow) {
  return {
    id: event.id,
    event_code: event.eventCode,
    status: event.status,
    description: event.description,
    created: toIso(event.createdAt),
  };
}

/** The payment detail (GET /v2/payments/{id}/); also the frozen `object` of a webhook body. */
export function paymentView(payment: PaymentRow, invoiceRows: PaymentInvoiceRow[], events: EventRow[]) {
  return {
    id: payment.id,
    originating_counterparty_id: payment.originatingCounterpartyId,
    receiving_counterparty_id: payment.receivingCounterpartyId,
    invoices: invoiceRows.map((row) => ({ id: row.id, invoice_number: row.invoiceNumber, amount_cents: row.amountCents })),
    amount_cents: payment.amountCents,
    currency: payment.currency,
    payment_method: payment.paymentMethod,
    status: payment.status,
    instrument_number: payment.instrumentNumber,
    events: [...events].sort((a, b) => a.seq - b.seq).map(eventView),
    refund_reason: payment.refundReason,
    // 1 at creation, one more with every event: a receiver that has seen version n drops anything older.
    version: payment.version,
    created: toIso(payment.createdAt),
    updated: toIso(payment.updatedAt),
  };
}

export type PaymentView = ReturnType<typeof paymentView>;
