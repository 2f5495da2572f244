import { z } from "@hono/zod-openapi";
import { createdFilters, pagingParams, repeatable, textFilter } from "../../lib/filters";
import { timestamp } from "../common";

const CURRENCIES = new Set(Intl.supportedValuesOf("currency"));

export const currency = z
  .string()
  .min(1, { abort: true })
  .refine((code) => /^[A-Z]{3}$/.test(code) && CURRENCIES.has(code), { error: "Enter an ISO 4217 currency code in upper case." })
  .default("USD")
  .openapi({ description: "ISO 4217 code, upper case.", example: "USD" });

// $100 billion: a payment of 100 such invoices still sums exactly in a JS number and in SQLite.
export const MAX_AMOUNT_CENTS = 10_000_000_000_000;
export const amountCents = z.int().min(1).max(MAX_AMOUNT_CENTS).openapi({ description: "The amount in the currency's minor unit.", example: 125000 });
const invoiceNumber = z.string().trim().min(1).max(255).openapi({ description: "The supplier's invoice number; need not be unique.", example: "INV-1001" });
const buyerId = z.string().min(1).max(64).openapi({ description: "A counterparty of type buyer in this account.", example: "cpty_demoBuyerAcme00000001" });
const supplierId = z
  .string()
  .min(1)
  .max(64)
  .openapi({ description: "A counterparty of type supplier in this account.", example: "cpty_demoSupplierNorthwind1" });

export const InvoiceInput = z.object({
  invoice_number: invoiceNumber,
  buyer_id: buyerId,
  supplier_id: supplierId,
  amount_cents: amountCents,
  currency,
});

export const InvoiceSchema = z
  .object({
    id: z.string().openapi({ description: "The invoice's id.", example: "inv_8Hc2mQpL0xTz7rVb1NwK5e" }),
    invoice_number: invoiceNumber,
    buyer_id: buyerId,
    supplier_id: supplierId,
    amount_cents: amountCents,
    currency: z.string().openapi({ description: "ISO 4217 code.", example: "USD" }),
    created: timestamp("When it was created."),
    updated: timestamp("When it last changed."),
  })
  .openapi("Invoice");

/** The invoice's own page: beyond the record, the payment that holds it. */
export const InvoiceDetailSchema = InvoiceSchema.extend({
  payment_id: z.string().nullable().openapi({
    description: "The payment that covers it now (not canceled or failed); null when none does. Beyond the published record: its detail only.",
    example: "pmt_demoPaymentSettled0001",
  }),
}).openapi("InvoiceDetail");

export const InvoiceQuery = z.object({
  ...repeatable("invoice_number", textFilter("Only invoices with these numbers.", "INV-1001")),
  ...createdFilters,
  ...pagingParams("invoices"),
});
