import { z } from "@hono/zod-openapi";
import { createdFilters, pagingParams, textFilter } from "../../lib/filters";
import { toIso } from "../../lib/time";
import type { Invoice } from "../../services/invoices";

const CURRENCIES = new Set(Intl.supportedValuesOf("currency"));

export const currency = z
  .string()
  .min(1, { abort: true })
  .refine((code) => /^[A-Z]{3}$/.test(code) && CURRENCIES.has(code), { error: "Enter an ISO 4217 currency code in upper case." })
  .default("USD");

// $100 billion: a payment of 100 such invoices still sums exactly in a JS number and in SQLite.
export const MAX_AMOUNT_CENTS = 10_000_000_000_000;
export const amountCents = z.int().min(1).max(MAX_AMOUNT_CENTS);

export const InvoiceInput = z
  .object({
    invoice_number: z.string().trim().min(1).max(255),
    buyer_id: z.string().min(1).max(64),
    supplier_id: z.string().min(1).max(64),
    amount_cents: amountCents,
    currency,
  })
  .openapi("InvoiceInput");

export const InvoiceSchema = z
  .object({
    id: z.string().openapi({ example: "inv_8Hc2mQpL0xTz7rVb1NwK5e" }),
    invoice_number: z.string(),
    buyer_id: z.string(),
    supplier_id: z.string(),
    amount_cents: z.number().int(),
    currency: z.string(),
    created: z.string().datetime(),
    updated: z.string().datetime(),
  })
  .openapi("Invoice");

export const InvoiceQuery = z.object({ invoice_number: textFilter(), ...createdFilters, ...pagingParams });

export const invoiceView = (row: Invoice) => ({
  id: row.id,
  invoice_number: row.invoiceNumber,
  buyer_id: row.buyerId,
  supplier_id: row.supplierId,
  amount_cents: row.amountCents,
  currency: row.currency,
  created: toIso(row.createdAt),
  updated: toIso(row.updatedAt),
});
