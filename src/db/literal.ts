import { sql, type SQL, type SQLWrapper } from "drizzle-orm";

/**
 * `column = 'value'` with the value written out, never bound: for a column a partial index's
 * condition names (a status). SQLite uses a partial index only for a query whose WHERE names the
 * index's own condition, and a value bound there makes it prepare the statement a second time once
 * bound, to see whether the index serves it: a short update of the outbox took 0.24 ms of D1's SQL
 * time with its status bound and 0.11 ms with it written out (docs/performance.md). Only a plain
 * word is written into SQL.
 */
export function equalsLiteral(column: SQLWrapper, value: string): SQL {
  if (!/^[a-z_]+$/.test(value)) throw new RangeError(`not a plain word: ${JSON.stringify(value)}`);
  return sql`${column} = ${sql.raw(`'${value}'`)}`;
}
