import { integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";

/**
 * Row counts per account and resource, kept in the same batch as each insert, so that an
 * unfiltered list answers `count` without scanning the table.
 */
export const listCounts = sqliteTable(
  "list_counts",
  {
    accountId: text("account_id").notNull(),
    resource: text("resource", { enum: ["counterparties", "invoices", "payments"] }).notNull(),
    n: integer("n").notNull(),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.resource] })],
);
