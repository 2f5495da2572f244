import { and, asc, count, desc, sql, type Column, type SQL } from "drizzle-orm";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";
import { getTableColumns } from "drizzle-orm";
import type { Db } from "../db/client";
import { notFound } from "../errors";
import type { PageRequest } from "../lib/pagination";

export type Direction = "asc" | "desc";

export interface ListSource<Row> {
  /** The sort column (created or updated, integer ms) and the id tie-breaker. */
  sort: Column;
  id: Column;
  /** Reads rows matching the list's filters plus `extra`, in `direction` by (sort, id). */
  rows: (extra: SQL | undefined, direction: Direction, limit: number, offset: number) => Promise<Row[]>;
  count: () => Promise<number>;
  key: (row: Row) => [number, string];
  /** Lists shown newest first flip every comparison. */
  descending?: boolean;
}

export interface Page<Row> {
  count: number;
  rows: Row[];
  page: number;
  hasNext: boolean;
  hasPrevious: boolean;
  /** The sort key of a row, for the links' cursors. */
  key: (row: Row) => [number, string];
}

/**
 * One page of a list. Offset for `page=N`; keyset (a range on the sort index) for cursors, so a
 * cursor page reads about `size` rows at any depth. A page past the end is 404 `Invalid page.`.
 */
export async function listPage<Row>(source: ListSource<Row>, request: PageRequest): Promise<Page<Row>> {
  const size = request.size;
  const forward: Direction = source.descending ? "desc" : "asc";
  const backward: Direction = source.descending ? "asc" : "desc";

  if (request.kind === "offset") {
    const [rows, count] = await Promise.all([
      source.rows(undefined, forward, size + 1, (request.page - 1) * size),
      source.count(),
    ]);
    if (rows.length === 0 && request.page > 1) throw notFound("Invalid page.");
    return {
      count,
      rows: rows.slice(0, size),
      page: request.page,
      hasNext: rows.length > size,
      hasPrevious: request.page > 1,
      key: source.key,
    };
  }

  const { cursor } = request;
  const [sortKey, id] = cursor.key;
  const after = cursor.dir === "after";
  const greater = after !== Boolean(source.descending);
  const bound = greater
    ? sql`(${source.sort}, ${source.id}) > (${sortKey}, ${id})`
    : sql`(${source.sort}, ${source.id}) < (${sortKey}, ${id})`;
  const [fetched, count] = await Promise.all([
    source.rows(bound, after ? forward : backward, size + 1, 0),
    source.count(),
  ]);
  const more = fetched.length > size;
  const rows = fetched.slice(0, size);
  if (!after) rows.reverse();
  return {
    count,
    rows,
    page: cursor.page,
    hasNext: after ? more : true,
    hasPrevious: after ? cursor.page > 1 : more,
    key: source.key,
  };
}

/** ORDER BY (sort, id) in one direction. */
export function keyOrder(direction: Direction, sort: Column, id: Column): SQL[] {
  return direction === "asc" ? [asc(sort), asc(id)] : [desc(sort), desc(id)];
}

/** `select count(*) from table where …`, for filtered lists. */
export async function countWhere(db: Db, table: SQLiteTable, where: SQL): Promise<number> {
  const row = await db.select({ n: count() }).from(table).where(where).get();
  return row?.n ?? 0;
}

export interface TableList {
  /** The list's filters, tenant scope included. */
  where: SQL;
  /** An integer-ms column of the table, and its id column as the tie-breaker. */
  sort: Column;
  id: Column;
  count: () => Promise<number>;
  descending?: boolean;
}

/** A page of one table's rows, ordered and keyed by (sort, id). */
export function listTable<T extends SQLiteTable>(db: Db, table: T, list: TableList, request: PageRequest) {
  type Row = T["$inferSelect"];
  const columns = Object.entries(getTableColumns(table));
  const field = (column: Column) => columns.find(([, candidate]) => candidate === column)![0];
  const sortField = field(list.sort);
  const idField = field(list.id);
  return listPage<Row>(
    {
      ...list,
      key: (row) => [(row as Record<string, number>)[sortField]!, (row as Record<string, string>)[idField]!],
      rows: (extra, direction, limit, offset) =>
        db
          .select()
          .from(table as SQLiteTable)
          .where(and(list.where, extra))
          .orderBy(...keyOrder(direction, list.sort, list.id))
          .limit(limit)
          .offset(offset) as unknown as Promise<Row[]>,
    },
    request,
  );
}
