// SQL the seeds share: the demo data (`npm start`) and the benchmark's seed insert rows straight into
// a shard, then derive what the service's writes would have stored with them.
import { readFileSync } from "node:fs";

/** What stores each payment's detail on its row, as the API shows it (test/seed-sql.test.ts checks it). */
export const paymentDetailSql = () => readFileSync(new URL("./payment-detail.sql", import.meta.url), "utf8");

// The bucket sizes of src/services/counts/buckets.ts (a day, an hour, a minute, a second).
const BUCKET_SIZES_MS = [86_400_000, 3_600_000, 60_000, 1_000];

// The payment statuses and the columns that count them (src/db/schema/status-counts.ts).
const STATUSES = ["pending", "in-progress", "settled", "canceled", "failed", "refunded"];
const STATUS_COLUMNS = STATUSES.map((status) => status.replace("-", "_")).join(", ");
const STATUS_SUMS = STATUSES.map((status) => `sum(status = '${status}')`).join(", ");

/** Rebuilds every stored count (src/services/counts) from the rows. */
export function recountSql(accountId) {
  const where = `WHERE account_id = '${accountId}'`;
  // The payment counts count every change up to the account's latest stamp (src/services/counts/payments.ts).
  const mark = `(SELECT coalesce(max(updated_at), 0) FROM payments ${where})`;
  const markOf = (resource) => (resource === "payments" ? mark : "NULL");
  const byValue = (resource, field) =>
    `INSERT OR REPLACE INTO list_counts (account_id, resource, n, counted_to) SELECT account_id, '${resource}/${field}=' || ${field}, count(*), ${markOf(resource)} FROM ${resource} ${where} GROUP BY account_id, ${field};`;
  return [
    ...["counterparties", "invoices"].map(
      (resource) => `INSERT OR REPLACE INTO list_counts (account_id, resource, n) SELECT '${accountId}', '${resource}', count(*) FROM ${resource} ${where};`,
    ),
    // The payments' row also counts them by status.
    `INSERT OR REPLACE INTO list_counts (account_id, resource, n, ${STATUS_COLUMNS}, counted_to) SELECT '${accountId}', 'payments', count(*), ${STATUSES.map((status) => `coalesce(sum(status = '${status}'), 0)`).join(", ")}, ${mark} FROM payments ${where};`,
    byValue("counterparties", "type"),
    byValue("payments", "originating_counterparty_id"),
    byValue("payments", "receiving_counterparty_id"),
    `DELETE FROM time_counts ${where};`,
    ...BUCKET_SIZES_MS.map(
      (size) =>
        `INSERT INTO time_counts (account_id, key, size, bucket, n) SELECT account_id, 'invoices.created_at', ${size}, (created_at / ${size}) * ${size}, count(*) FROM invoices ${where} GROUP BY 1, 2, 3, 4;`,
    ),
    // A payment's created buckets also count it by its status.
    ...BUCKET_SIZES_MS.map(
      (size) =>
        `INSERT INTO time_counts (account_id, key, size, bucket, n, ${STATUS_COLUMNS}, counted_to) SELECT account_id, 'payments.created_at', ${size}, (created_at / ${size}) * ${size}, count(*), ${STATUS_SUMS}, ${mark} FROM payments ${where} GROUP BY 1, 2, 3, 4;`,
    ),
    // Each payment's moves of `updated` away from `created`: +1 where it is, -1 where it was made.
    ...BUCKET_SIZES_MS.map(
      (size) =>
        `INSERT INTO time_counts (account_id, key, size, bucket, n, counted_to) SELECT account_id, 'payments.updated_moves', ${size}, b, sum(d), ${mark} FROM (SELECT account_id, (updated_at / ${size}) * ${size} AS b, 1 AS d FROM payments ${where} UNION ALL SELECT account_id, (created_at / ${size}) * ${size}, -1 FROM payments ${where}) GROUP BY account_id, b HAVING sum(d) <> 0;`,
    ),
  ].join("\n");
}
