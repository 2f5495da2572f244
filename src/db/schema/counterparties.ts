import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { tenants } from "./tenants";

export const COUNTERPARTY_TYPES = ["buyer", "supplier"] as const;
export type CounterpartyType = (typeof COUNTERPARTY_TYPES)[number];

export const counterparties = sqliteTable(
  "counterparties",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => tenants.id),
    internalId: text("internal_id").notNull(),
    type: text("type", { enum: COUNTERPARTY_TYPES }).notNull(),
    name: text("name").notNull(),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [
    // The clash rule (409).
    uniqueIndex("counterparties_internal_id_uq").on(t.accountId, t.type, t.internalId),
    // The `internal_id` and `type` filters, in the list's order (no sort, no walk of the account).
    index("counterparties_internal_id_list_idx").on(t.accountId, t.internalId, t.createdAt, t.id),
    index("counterparties_type_idx").on(t.accountId, t.type, t.createdAt, t.id),
    index("counterparties_created_idx").on(t.accountId, t.createdAt, t.id),
  ],
);
