import { getTableColumns, sql, type SQL } from "drizzle-orm";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";
import type { Db } from "./client";

/**
 * `INSERT INTO table (every column) SELECT <values> WHERE <guard>`: an insert that only happens
 * when the guard holds at that point of a D1 batch. D1 has no interactive transactions, so this
 * is how a batch makes its later statements depend on an earlier conditional update.
 */
export function guardedInsert<T extends SQLiteTable>(db: Db, table: T, row: T["$inferInsert"], guard: SQL) {
  const values = Object.entries(getTableColumns(table)).map(([key, column]) => {
    const value = (row as Record<string, unknown>)[key];
    return sql`${value === undefined || value === null ? null : column.mapToDriverValue(value)}`;
  });
  return db.insert(table).select(sql`select ${sql.join(values, sql`, `)} where ${guard}`);
}
