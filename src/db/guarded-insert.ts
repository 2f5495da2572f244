import { getTableColumns, is, SQL, sql } from "drizzle-orm";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";
import type { Db } from "./client";

/**
 * `INSERT INTO table (every column) SELECT <values> [FROM <from>] WHERE <guard>`: an insert that
 * only happens when the guard holds at that point of a D1 batch. D1 has no interactive
 * transactions, so this is how a batch makes its later statements depend on an earlier
 * conditional update. A value may be an SQL expression (evaluated there, for example a stamp
 * taken earlier in the batch, or a column of `from`, which inserts one row per row of it); a
 * column left out takes its (non-SQL) default.
 */
export function guardedInsert<T extends SQLiteTable>(
  db: Db,
  table: T,
  row: { [K in keyof T["$inferInsert"]]: T["$inferInsert"][K] | SQL },
  guard: SQL,
  from?: SQL,
) {
  const values = Object.entries(getTableColumns(table)).map(([key, column]) => {
    const given = (row as Record<string, unknown>)[key];
    // A column left out takes its default, as a plain insert would give it.
    const value = given === undefined && column.hasDefault && !is(column.default, SQL) ? column.default : given;
    if (is(value, SQL)) return value;
    return sql`${value === undefined || value === null ? null : column.mapToDriverValue(value)}`;
  });
  return db.insert(table).select(sql`select ${sql.join(values, sql`, `)} ${from ? sql`from ${from} ` : sql``}where ${guard}`);
}
