import { sql, type SQL } from "drizzle-orm";

/**
 * An integer-ms SQL expression as ISO 8601 text, as `Date.toISOString` writes it: a stamp taken
 * inside a D1 batch (a payment's `updated`, an event's `created`) as the payment writes put it in
 * the stored detail.
 */
export function isoSql(ms: SQL): SQL {
  return sql`strftime('%Y-%m-%dT%H:%M:%S', (${ms}) / 1000, 'unixepoch') || '.' || printf('%03d', (${ms}) % 1000) || 'Z'`;
}
