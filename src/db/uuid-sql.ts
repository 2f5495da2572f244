import { sql, type SQL } from "drizzle-orm";

/**
 * A random UUID (version 4, RFC 9562 variant), made by SQL, as `crypto.randomUUID()` writes it:
 * for a row a statement inserts from other rows, one id per row.
 */
export function uuidSql(): SQL {
  return sql`lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6)))`;
}
