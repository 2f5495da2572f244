import { integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { statusCounts } from "./status-counts";

/**
 * Row counts per account and key (a resource, or a resource and one value of a filter), so that
 * a list answers `count` without counting its matches; when each is written: services/counts.
 * WITHOUT ROWID (added by hand, migrations/README.md).
 */
export const listCounts = sqliteTable(
  "list_counts",
  {
    accountId: text("account_id").notNull(),
    resource: text("resource").notNull(),
    n: integer("n").notNull(),
    // On the `payments` row: the account's payments by their status now.
    ...statusCounts(),
    // On the account's payment counts (the `payments` row and its counterparty rows): the stamp
    // they count changes up to (services/counts/payments.ts). Null on other rows.
    countedTo: integer("counted_to"),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.resource] })],
);
