import { getTableColumns, getTableName, sql, type SQL } from "drizzle-orm";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";

/** A table under another name: each column as SQL that names it `"name"."column"` wherever it goes, and `from`, its `"table" "name"`. */
export type Aliased<T extends SQLiteTable> = { [K in keyof T["_"]["columns"]]: SQL } & { from: SQL };

/**
 * A table under another name, as a value a statement is given: its columns render as
 * `"name"."column"` in any clause (drizzle leaves a column unqualified in some), and `from` names
 * it in a FROM or JOIN. Statements that read the same row pass this value along, never a letter
 * they agree on.
 */
export function aliased<T extends SQLiteTable>(table: T, name: string): Aliased<T> {
  const columns = Object.entries(getTableColumns(table)).map(([key, column]) => [key, sql`${sql.identifier(name)}.${sql.identifier(column.name)}`]);
  return { ...Object.fromEntries(columns), from: sql`${sql.identifier(getTableName(table))} ${sql.identifier(name)}` } as Aliased<T>;
}
