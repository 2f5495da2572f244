// SQL the seeds share: the demo data (`npm start`) and the benchmark's seed insert rows straight into
// a shard, then derive what the service's writes would have stored with them.
import { readFileSync } from "node:fs";

/** What stores each payment's detail on its row, as the API shows it (test/seed-sql.test.ts checks it). */
export const paymentDetailSql = () => readFileSync(new URL("./payment-detail.sql", import.meta.url), "utf8");

// The bucket sizes of src/lib/time-buckets.ts (a day, an hour, a minute, a second).
const BUCKET_SIZES_MS = [86_400_000, 3_600_000, 60_000, 1_000];

/** Rebuilds every stored count (src/services/list-counts.ts, time-counts.ts) from the rows. */
export function recountSql(accountId) {
  const where = `WHERE account_id = '${accountId}'`;
  const byValue = (resource, field) =>
    `INSERT OR REPLACE INTO list_counts SELECT account_id, '${resource}/${field}=' || ${field}, count(*) FROM ${resource} ${where} GROUP BY account_id, ${field};`;
  return [
    ...["counterparties", "invoices", "payments"].map(
      (resource) => `INSERT OR REPLACE INTO list_counts SELECT '${accountId}', '${resource}', count(*) FROM ${resource} ${where};`,
    ),
    byValue("counterparties", "type"),
    byValue("payments", "status"),
    byValue("payments", "originating_counterparty_id"),
    byValue("payments", "receiving_counterparty_id"),
    `DELETE FROM time_counts ${where};`,
    ...[["invoices", "created_at"], ["payments", "created_at"]].flatMap(([table, column]) =>
      BUCKET_SIZES_MS.map(
        (size) =>
          `INSERT INTO time_counts SELECT account_id, '${table}.${column}', ${size}, (${column} / ${size}) * ${size}, count(*) FROM ${table} ${where} GROUP BY 1, 2, 3, 4;`,
      ),
    ),
    // Each payment's moves of `updated` away from `created`: +1 where it is, -1 where it was made.
    ...BUCKET_SIZES_MS.map(
      (size) =>
        `INSERT INTO time_counts SELECT account_id, 'payments.updated_moves', ${size}, b, sum(d) FROM (SELECT account_id, (updated_at / ${size}) * ${size} AS b, 1 AS d FROM payments ${where} UNION ALL SELECT account_id, (created_at / ${size}) * ${size}, -1 FROM payments ${where}) GROUP BY account_id, b HAVING sum(d) <> 0;`,
    ),
    // Each payment status's own created buckets (a status filter with a created range).
    ...BUCKET_SIZES_MS.map(
      (size) =>
        `INSERT INTO time_counts SELECT account_id, 'payments.created_at|status=' || status, ${size}, (created_at / ${size}) * ${size}, count(*) FROM payments ${where} GROUP BY 1, 2, 3, 4;`,
    ),
  ].join("\n");
}
