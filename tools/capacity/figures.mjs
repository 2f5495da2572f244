// What the capacity figures mean for one shard. Pure.

/** D1's cap on one database, which cannot be raised. */
export const SHARD_BYTES = 10 * 1000 ** 3;
const LOG_TABLES = new Set(["webhook_deliveries", "webhook_attempts"]);

/**
 * Bytes per payment (all tables, and the delivery log's part, which retention removes), how many
 * payments a shard holds with and without their log, and the changes a second its SQL time allows
 * (a change's own and its share of the count folds').
 */
export function shardFigures({ bytes, payments, perChange, eventsPerPayment, foldShare = { sql_ms: 0 } }) {
  const sum = (list) => list.reduce((total, item) => total + item.bytes, 0);
  const all = sum(bytes) / payments;
  const log = sum(bytes.filter((item) => LOG_TABLES.has(item.table))) / payments;
  // A change's own batch, and its share of the folds of the payment counts.
  const sqlMsPerChange = (perChange.creation.sql_ms + eventsPerPayment * perChange.event.sql_ms) / (1 + eventsPerPayment) + foldShare.sql_ms;
  return {
    bytes_per_payment: all,
    log_bytes_per_payment: log,
    payments_per_shard_with_log: Math.floor(SHARD_BYTES / all),
    payments_per_shard_core: Math.floor(SHARD_BYTES / (all - log)),
    sql_ms_per_change: sqlMsPerChange,
    changes_per_second: sqlMsPerChange > 0 ? Math.floor(1000 / sqlMsPerChange) : null,
  };
}
