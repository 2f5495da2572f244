/**
 * The large rows the move tests copy: an ended delivery of the subscription with `body` as it is,
 * made `at` (its `created` and `updated`), written on the shard directly, as a statement to run
 * or batch. Past the API, so that a body can be as large as D1 lets a row be.
 */
export function endedDelivery(
  shard: D1Database,
  row: { id: string; subscriptionId: string; accountId: string; body: string; at: number },
): D1PreparedStatement {
  return shard
    .prepare(
      `insert into webhook_deliveries (id, subscription_id, account_id, payment_id, body, content_type, status, attempts, created_at, updated_at, test)
       values (?1, ?2, ?3, 'pmt_none', ?4, 'application/json', 'succeeded', 1, ?5, ?5, 0)`,
    )
    .bind(row.id, row.subscriptionId, row.accountId, row.body, row.at);
}
