import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { tenants } from "./tenants";
import { counterparties } from "./counterparties";

export const invoices = sqliteTable(
  "invoices",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => tenants.id),
    invoiceNumber: text("invoice_number").notNull(),
    buyerId: text("buyer_id")
      .notNull()
      .references(() => counterparties.id),
    supplierId: text("supplier_id")
      .notNull()
      .references(() => counterparties.id),
    amountCents: integer("amount_cents").notNull(),
    currency: text("currency").notNull(),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [index("invoices_created_idx").on(t.accountId, t.createdAt, t.id), index("invoices_number_idx").on(t.accountId, t.invoiceNumber, t.createdAt, t.id)],
);
