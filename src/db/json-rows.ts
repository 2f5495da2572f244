import { sql, type SQL } from "drizzle-orm";

/**
 * Many rows' values as one bound JSON parameter, read in SQL as a table `v` with the named
 * columns: one statement for a whole set of rows (D1 allows 100 bound parameters a statement).
 * `json` is `JSON.stringify` of an array of objects; names are code, never input.
 */
export function jsonRows(json: string, ...names: string[]): SQL {
  return sql`(select ${sql.join(
    names.map((name) => sql.raw(`json_extract(value, '$.${name}') as ${name}`)),
    sql`, `,
  )} from json_each(${json})) as v`;
}

/** A column of the `jsonRows` table. */
export function jsonColumn(name: string): SQL {
  return sql.raw(`v.${name}`);
}
