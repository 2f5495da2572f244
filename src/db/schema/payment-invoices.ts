import { sql } from "drizzle-orm";
import { integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { invoices } from "./invoices";
import { payments } from "./payments";

/**
 * A payment's invoices, keyed by the invoice and `released_by`. WITHOUT ROWID (added by hand,
 * migrations/README.md): a link is one row and no index entry. An invoice belongs to at
 * most one payment that is not canceled or failed, even under races: that payment's link is the
 * invoice's one live link (released_by ''), and the key refuses a second. A payment that lets go of
 * its invoices (canceled or failed) keeps its links with its own id as their released_by. A payment's
 * links are found by its invoices' ids, which its stored detail lists.
 */
export const paymentInvoices = sqliteTable(
  "payment_invoices",
  {
    invoiceId: text("invoice_id")
      .notNull()
      .references(() => invoices.id),
    // '' while the link is live (the payment holds the invoice); the payment's id once it let go.
    releasedBy: text("released_by").notNull(),
    paymentId: text("payment_id")
      .notNull()
      .references(() => payments.id),
    // The invoice as the payment detail lists it, copied when the payment is made (invoices never
    // change).
    invoiceNumber: text("invoice_number").notNull().default(""),
    amountCents: integer("amount_cents").notNull().default(0),
    invoiceCreatedAt: integer("invoice_created_at").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.invoiceId, t.releasedBy] })],
);

/** A live link: its payment holds the invoice. */
export const liveLink = sql`${paymentInvoices.releasedBy} = ''`;
