import { integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { statusCounts } from "./status-counts";

/**
 * Rows per account, timestamp key (`invoices.created_at`, `payments.created_at`, and
 * `payments.updated_moves`) and time bucket of each size, so that a list filtered by a time range
 * answers `count` from a few hundred buckets whatever it matches; when each is written:
 * services/counts. WITHOUT ROWID
 * (added by hand, migrations/README.md): a new bucket is one row and no key entry.
 */
export const timeCounts = sqliteTable(
  "time_counts",
  {
    accountId: text("account_id").notNull(),
    key: text("key").notNull(),
    size: integer("size").notNull(),
    bucket: integer("bucket").notNull(),
    n: integer("n").notNull(),
    // On a `payments.created_at` row: its payments by their status now.
    ...statusCounts(),
    // On a payment key's row: the stamp it counts changes up to (services/counts/payments.ts). Null on
    // an invoice key's row.
    countedTo: integer("counted_to"),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.key, t.size, t.bucket] })],
);
