// The SQL that rebuilds every stored list count (src/services/list-counts.ts) from the rows,
// for the demo data and the benchmark's seed. Migration 0005 ran the same once for existing data.
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
  ].join("\n");
}
