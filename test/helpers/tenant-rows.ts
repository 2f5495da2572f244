/** Every shard table that names its account, each with the column that does. */
export const TENANT_TABLES = [
  ["tenants", "id"],
  ["counterparties", "account_id"],
  ["invoices", "account_id"],
  ["payments", "account_id"],
  ["list_counts", "account_id"],
  ["time_counts", "account_id"],
  ["idempotency_keys", "account_id"],
  ["webhook_subscriptions", "account_id"],
  ["webhook_deliveries", "account_id"],
] as const;

/** The tables reached through another (events and links through payments, attempts through deliveries, stats through subscriptions). */
export const CHILD_COUNTS = {
  payment_events: "select count(*) as n from payment_events e join payments p on p.id = e.payment_id where p.account_id = ?",
  payment_invoices: "select count(*) as n from payment_invoices l join invoices i on i.id = l.invoice_id where i.account_id = ?",
  webhook_attempts: "select count(*) as n from webhook_attempts a join webhook_deliveries d on d.id = a.delivery_id where d.account_id = ?",
  webhook_stats: "select count(*) as n from webhook_stats s join webhook_subscriptions w on w.id = s.subscription_id where w.account_id = ?",
} as const;

/** How many rows of the account each table of a shard holds. */
export async function tenantRows(d1: D1Database, accountId: string): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  const queries = [
    ...TENANT_TABLES.map(([table, column]) => [table, `select count(*) as n from ${table} where ${column} = ?`] as const),
    ...Object.entries(CHILD_COUNTS),
  ];
  for (const [name, sql] of queries) counts[name] = (await d1.prepare(sql).bind(accountId).first<{ n: number }>())!.n;
  return counts;
}
