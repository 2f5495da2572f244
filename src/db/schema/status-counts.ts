import { integer } from "drizzle-orm/sqlite-core";
import type { PaymentStatus } from "./payments";

/**
 * A count per payment status, as columns of one count row (list_counts' `payments` row and
 * time_counts' `payments.created_at` rows): a new payment adds to its row's `n` and its status
 * at once, and a status change moves one between two columns of the same row, one row written
 * where a row per status took two. Each property is named as its column, as `statusColumn` gives it.
 */
export function statusCounts() {
  return {
    pending: integer("pending").notNull().default(0),
    in_progress: integer("in_progress").notNull().default(0),
    settled: integer("settled").notNull().default(0),
    canceled: integer("canceled").notNull().default(0),
    failed: integer("failed").notNull().default(0),
    refunded: integer("refunded").notNull().default(0),
  };
}

export type StatusColumn = keyof ReturnType<typeof statusCounts>;

/** The column that counts a status (its name in SQL and in the schema). Pure. */
export function statusColumn(status: PaymentStatus): StatusColumn {
  return status.replace("-", "_") as StatusColumn;
}
