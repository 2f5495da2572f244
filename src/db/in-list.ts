import { sql, type Column, type SQL } from "drizzle-orm";

/**
 * `column IN (values)` with the whole list as one bound JSON parameter. D1 allows 100 bound
 * parameters per statement; a page of ids or a long repeated filter would pass it with `inArray`.
 */
export function inList(column: Column, values: readonly (string | number)[]): SQL {
  return sql`${column} in (select value from json_each(${JSON.stringify(values)}))`;
}
