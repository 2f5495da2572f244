import type { Counterparty } from "../counterparties";
import type { invoices } from "../../db/schema";
import { invalid, invalidField, type FieldErrors } from "../../errors";
import type { PaymentFields, PaymentEventFields } from "./lifecycle";

type InvoiceRow = typeof invoices.$inferSelect;

/**
 * Checks a new payment against what was read for it: its counterparties (undefined when not the
 * account's) and the account's invoices among those it names. Returns the invoices in request
 * order, or throws 400 with every field's errors. Pure.
 */
export function checkPaymentInput(
  input: PaymentFields,
  buyer: Counterparty | undefined,
  supplier: Counterparty | undefined,
  found: InvoiceRow[],
): InvoiceRow[] {
  const errors: FieldErrors = {};
  if (!buyer) errors.originating_counterparty_id = [`Invalid pk "${input.originating_counterparty_id}" - object does not exist.`];
  else if (buyer.type !== "buyer") errors.originating_counterparty_id = ["The originating counterparty must be a buyer."];
  if (!supplier) errors.receiving_counterparty_id = [`Invalid pk "${input.receiving_counterparty_id}" - object does not exist.`];
  else if (supplier.type !== "supplier") errors.receiving_counterparty_id = ["The receiving counterparty must be a supplier."];

  if (new Set(input.invoice_ids).size !== input.invoice_ids.length) {
    errors.invoice_ids = ["Each invoice may appear only once."];
    throw invalid(errors);
  }
  const byId = new Map(found.map((invoice) => [invoice.id, invoice]));
  const invoiceErrors: string[] = [];
  for (const invoiceId of input.invoice_ids) {
    const invoice = byId.get(invoiceId);
    if (!invoice) invoiceErrors.push(`Invalid pk "${invoiceId}" - object does not exist.`);
    else if (invoice.buyerId !== input.originating_counterparty_id || invoice.supplierId !== input.receiving_counterparty_id) {
      invoiceErrors.push(`Invoice ${invoiceId} is not between the payment's buyer and supplier.`);
    }
  }
  if (invoiceErrors.length === 0 && new Set(found.map((invoice) => invoice.currency)).size > 1) {
    invoiceErrors.push("All invoices of a payment must have the same currency.");
  }
  if (invoiceErrors.length > 0) errors.invoice_ids = invoiceErrors;
  if (Object.keys(errors).length > 0) throw invalid(errors);
  return input.invoice_ids.map((invoiceId) => byId.get(invoiceId)!);
}

/** A refund needs its reason, and only a refund takes one. Pure. */
export function checkEventInput(input: PaymentEventFields): void {
  if (input.status === "refunded" && !input.refund_reason) {
    throw invalidField("refund_reason", "This field is required when status is refunded.");
  }
  if (input.status !== "refunded" && input.refund_reason != null) {
    throw invalidField("refund_reason", "A refund reason is only accepted with status refunded.");
  }
}
