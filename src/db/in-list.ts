import { eq, sql, type Column, type SQL } from "drizzle-orm";

/**
 * `column IN (values)` with the whole list as one bound JSON parameter. D1 allows 100 bound
 * parameters per statement; a page of ids or a long repeated filter would pass it with `inArray`.
 * One value is a plain `=`: SQLite then uses an index on (account, column, created, id) for the
 * filter and the order at once, where the IN form made it walk the account's created index
 * (1,000,000 rows read for one invoice number at scale; see `npm run bench`).
 */
export function inList(column: Column, values: readonly (string | number)[]): SQL {
  if (values.length === 1) return eq(column, values[0]!);
  return sql`${column} in (select value from json_each(${JSON.stringify(values)}))`;
}
