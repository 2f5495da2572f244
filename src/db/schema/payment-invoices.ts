import { sql } from "drizzle-orm";
import { integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { invoices } from "./invoices";
import { payments } from "./payments";

/** A payment's invoices. WITHOUT ROWID (migration 0014; drizzle cannot say so): a link is one row and its claim entry. */
export const paymentInvoices = sqliteTable(
  "payment_invoices",
  {
    paymentId: text("payment_id").notNull().references(() => payments.id),
    invoiceId: text("invoice_id").notNull().references(() => invoices.id),
    // 1 while the payment is not canceled or failed: the invoice is claimed by it.
    active: integer("active").notNull(),
    // The invoice as the payment detail lists it, copied when the payment is made (invoices never
    // change), so that a page of payments reads one row per invoice instead of two.
    invoiceNumber: text("invoice_number").notNull().default(""),
    amountCents: integer("amount_cents").notNull().default(0),
    invoiceCreatedAt: integer("invoice_created_at").notNull().default(0),
  },
  (t) => [
    primaryKey({ columns: [t.paymentId, t.invoiceId] }),
    // An invoice belongs to at most one payment that is not canceled or failed, even under races;
    // and the payment that claims an invoice is found here (with `invoiceClaimed` in the query).
    uniqueIndex("payment_invoices_claim_uq").on(t.invoiceId).where(sql`active = 1`),
  ],
);

/** `active = 1` written out, not bound: SQLite reads the claim index only for a query that names its condition. */
export const invoiceClaimed = sql`${paymentInvoices.active} = 1`;
