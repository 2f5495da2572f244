import { sql } from "drizzle-orm";
import { integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { invoices } from "./invoices";
import { payments } from "./payments";

/**
 * A payment's invoices, keyed by the invoice and its claim. WITHOUT ROWID (added by hand,
 * migrations/README.md): a link is one row and no index entry. An invoice belongs to at
 * most one payment that is not canceled or failed, even under races: that payment's link is the
 * invoice's one row with claim '', and the key refuses a second. A payment that lets go of its
 * invoices (canceled or failed) keeps its links with its own id as their claim. A payment's
 * links are found by its invoices' ids, which its stored detail lists.
 */
export const paymentInvoices = sqliteTable(
  "payment_invoices",
  {
    invoiceId: text("invoice_id")
      .notNull()
      .references(() => invoices.id),
    // '' while the payment claims the invoice; the payment's id once it let go.
    claim: text("claim").notNull(),
    paymentId: text("payment_id")
      .notNull()
      .references(() => payments.id),
    // The invoice as the payment detail lists it, copied when the payment is made (invoices never
    // change).
    invoiceNumber: text("invoice_number").notNull().default(""),
    amountCents: integer("amount_cents").notNull().default(0),
    invoiceCreatedAt: integer("invoice_created_at").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.invoiceId, t.claim] })],
);

/** A link that holds its invoice. */
export const invoiceClaimed = sql`${paymentInvoices.claim} = ''`;
