import { and, asc, count, desc, eq, sql, type Column, type SQL } from "drizzle-orm";
import { inList } from "./in-list";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import type { WithSubquery } from "drizzle-orm";
import { getTableColumns } from "drizzle-orm";
import { runNamedBatch, type BatchStatement, type Db } from "./client";
import { notFound } from "../errors";
import { fixedLimit } from "./fixed-limit";
import type { PageRequest } from "../lib/pagination";
import { LIST_PAGE_BYTES } from "../lib/list-bounds";

export type Direction = "asc" | "desc";

export interface ListSource<Row> {
  /** The sort column (created or updated, integer ms) and the id tie-breaker. */
  sort: Column;
  id: Column;
  /**
   * Reads rows matching the list's filters plus `extra`, in `direction` by (sort, id), from
   * `start`: after skipping that many rows, or where a seek puts it.
   */
  rows: (extra: SQL | undefined, direction: Direction, limit: number, start: number | SeekStart) => Promise<Row[]>;
  count: () => Promise<number>;
  key: (row: Row) => [number, string];
  /** Lists shown newest first flip every comparison. */
  descending?: boolean;
  /** Where `page=N` starts, found without walking the rows before it (services/counts/seek.ts). */
  seek?: Seek;
}

/**
 * Where a list's `page=N` starts, as part of the page's own query: `with` (a common table
 * expression the query carries) finds the start; `condition` starts the rows there and `skip`
 * is the few rows still to skip after it. Past the end, the condition holds for no row.
 */
export type SeekStart = { with: WithSubquery; condition: SQL; skip: SQL };
export type Seek = (offset: number) => SeekStart;

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
    const offset = (request.page - 1) * size;
    const start = source.seek && offset > 0 ? source.seek(offset) : offset;
    const [rows, count] = await Promise.all([source.rows(undefined, forward, size + 1, start), source.count()]);
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

  if (request.kind === "last") {
    // The last `size` rows, read backwards with the count in one round trip; the last page holds
    // what is left over the full pages before it.
    const [fetched, count] = await Promise.all([source.rows(undefined, backward, size, 0), source.count()]);
    const page = Math.max(1, Math.ceil(count / size));
    const rows = fetched.slice(0, Math.max(0, count - (page - 1) * size)).reverse();
    return { count, rows, page, hasNext: false, hasPrevious: page > 1, key: source.key };
  }

  const { cursor } = request;
  const [sortKey, id] = cursor.key;
  const after = cursor.dir === "after";
  const greater = after !== Boolean(source.descending);
  const bound = greater ? sql`(${source.sort}, ${source.id}) > (${sortKey}, ${id})` : sql`(${source.sort}, ${source.id}) < (${sortKey}, ${id})`;
  const [fetched, count] = await Promise.all([source.rows(bound, after ? forward : backward, size + 1, 0), source.count()]);
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

/** `select count(*) from table where …`, for filtered lists, as a query read with the page. */
export function countWhere(db: Db, table: SQLiteTable, where: SQL): CountQuery {
  return db.select({ n: count() }).from(table).where(where);
}

export type CountQuery = BatchStatement & PromiseLike<{ n: number }[]>;

export interface TableList {
  /** The list's filters, tenant scope included. */
  where: SQL;
  /** An integer-ms column of the table, and its id column as the tie-breaker. */
  sort: Column;
  id: Column;
  /**
   * The list's `count`, as one query (a stored count, bucket sums, or a count of the matches): read
   * in the same round trip as the page's rows.
   */
  count: CountQuery;
  descending?: boolean;
  seek?: Seek;
  /**
   * A repeated filter, split: `where` is the list's filters without it, `arms` one condition per
   * value. With several values, each value's rows are read along its own index and merged here: an
   * IN list in one query makes SQLite walk the account in created order instead (1,000,000 rows
   * read for three invoice numbers at scale), and each value's query reads at most one page.
   */
  anyOf?: { where: SQL; arms: SQL[] };
  /** Bytes of the list's largest row (lib/list-bounds.ts): whether every value's page may be read whole. */
  largestRowBytes?: number;
  /** The column that makes a row large, read within the page's bytes when the values' pages may not be read whole. */
  large?: Column;
}

/**
 * A page of one table's rows, ordered and keyed by (sort, id): whole rows, or only `fields` (and
 * the sort and id, which the page's links need), with `made`: values SQL makes from each row
 * (such as its view's JSON text, db/json-view.ts).
 */
export function listTable<
  T extends SQLiteTable,
  Field extends keyof T["$inferSelect"] & string = keyof T["$inferSelect"] & string,
  Made extends Record<string, SQL> = Record<never, SQL>,
>(db: Db, table: T, list: TableList & { fields?: Field[]; made?: Made }, request: PageRequest) {
  type Row = Pick<T["$inferSelect"], Field> & { [Name in keyof Made]: Made[Name] extends SQL<infer Value> ? Value : never };
  const columns = Object.entries(getTableColumns(table));
  const field = (column: Column) => columns.find(([, candidate]) => candidate === column)![0];
  const sortField = field(list.sort);
  const idField = field(list.id);
  const chosen = (list.fields || list.made) && new Set<string>([...(list.fields ?? []), sortField, idField]);
  const selection = chosen && { ...Object.fromEntries(columns.filter(([name]) => chosen.has(name))), ...list.made };
  const key = (row: Row): [number, string] => [(row as Record<string, number>)[sortField]!, (row as Record<string, string>)[idField]!];
  const query = (where: SQL, extra: SQL | undefined, direction: Direction, limit: number, start: number | SeekStart) => {
    const seek = typeof start === "number" ? null : start;
    const from = seek ? db.with(seek.with) : db;
    return (
      (selection ? from.select(selection) : from.select())
        .from(table as SQLiteTable)
        .where(and(where, extra, seek?.condition))
        .orderBy(...keyOrder(direction, list.sort, list.id))
        .limit(fixedLimit(limit))
        // A seek's skip is SQL read from its walk: drizzle writes any SQL here (`offset ${offset}`),
        // though its type names only a number or a placeholder.
        .offset((seek?.skip ?? start) as number)
    );
  };
  const split = list.anyOf && list.anyOf.arms.length > 1 ? list.anyOf : null;
  // The count rides along with the page's reads: one round trip for the whole page, `page=N`
  // included (its seek is part of the page's query).
  let counted!: (n: number) => void;
  const countAlong = new Promise<number>((resolve) => (counted = resolve));
  const along = (count: unknown) => counted(Number((count as { n: number }[])[0]?.n ?? 0));
  return listPage<Row>(
    {
      ...list,
      key,
      count: () => countAlong,
      // A list read value by value merges its values' pages here, by offset.
      seek: split ? undefined : list.seek,
      rows: async (extra, direction, limit, start) => {
        // `page=N` past the first of a list read value by value is read as one query (an offset
        // over every value's rows would read that many keys of each value).
        if (!split || start !== 0) {
          const { rows, count } = await runNamedBatch(db, { rows: query(list.where, extra, direction, limit, start), count: list.count });
          along(count);
          return rows as unknown as Row[];
        }
        // Each value's first rows along its own index, merged. Whole rows when every value's page
        // of the largest rows fits a page's bytes; otherwise only their keys (and, for a list that
        // names its large column, as much of it as fits), then the page's rows that are missing.
        const whole = split.arms.length * (limit + 1) * (list.largestRowBytes ?? 0) <= LIST_PAGE_BYTES;
        const keyOnly = { [sortField]: list.sort, [idField]: list.id } as Record<string, SQLiteColumn | SQL>;
        const large = list.large && field(list.large);
        if (!whole && list.large && large) {
          const budget = Math.floor(LIST_PAGE_BYTES / split.arms.length);
          keyOnly[large] =
            sql`case when sum(length(cast(${list.large} as blob))) over (order by ${sql.join(keyOrder(direction, list.sort, list.id), sql`, `)} rows unbounded preceding) <= ${budget} then ${list.large} end`;
        }
        const arms = split.arms.map((arm) =>
          whole
            ? query(split.where, and(arm, extra), direction, limit, 0)
            : db
                .select(keyOnly)
                .from(table as SQLiteTable)
                .where(and(split.where, arm, extra))
                .orderBy(...keyOrder(direction, list.sort, list.id))
                .limit(fixedLimit(limit)),
        );
        const batch = await runNamedBatch(db, { count: list.count, arms: arms as unknown as BatchStatement[] });
        along(batch.count);
        const page = mergeByKey((batch.arms as unknown as Row[][]).flat(), key, direction).slice(0, limit);
        const missing = whole ? [] : page.filter((row) => !large || (row as Record<string, unknown>)[large] === null).map((row) => key(row)[1]);
        if (missing.length === 0) return page;
        const read = (await (selection ? db.select(selection) : db.select())
          .from(table as SQLiteTable)
          .where(and(list.where, inList(list.id, missing)))) as unknown as Row[];
        const byId = new Map(read.map((row) => [key(row)[1], row]));
        const toRead = new Set(missing);
        // A row gone since its key was read is left out, as if the page had been read after.
        const rows: Row[] = [];
        for (const row of page) {
          const kept = toRead.has(key(row)[1]) ? byId.get(key(row)[1]) : row;
          if (kept) rows.push(kept);
        }
        return rows;
      },
    },
    request,
  );
}

/** Rows of several ordered reads as one list in (sort, id) order. Pure. */
export function mergeByKey<Row>(rows: Row[], key: (row: Row) => [number, string], direction: Direction): Row[] {
  const sign = direction === "asc" ? 1 : -1;
  return [...rows].sort((a, b) => {
    const [sa, ia] = key(a);
    const [sb, ib] = key(b);
    return sign * (sa - sb || (ia < ib ? -1 : ia > ib ? 1 : 0));
  });
}

export interface RepeatedFilter {
  column: Column;
  values: readonly string[] | undefined;
}

/**
 * A list's conditions: `base` (tenant, time bounds) and its repeatable filters, given in order of
 * preference for an index (the most selective first). The first filter given is the one read
 * value by value when it holds several values (listTable's `anyOf`); the others stay IN lists.
 */
export function listConditions(base: SQL[], repeated: RepeatedFilter[]): { where: SQL; anyOf?: { where: SQL; arms: SQL[] } } {
  const present = repeated.filter((filter): filter is { column: Column; values: readonly string[] } => filter.values !== undefined);
  const conditions = present.map((filter) => inList(filter.column, filter.values));
  const where = and(...base, ...conditions)!;
  const [first] = present;
  if (!first || first.values.length < 2) return { where };
  return { where, anyOf: { where: and(...base, ...conditions.slice(1))!, arms: first.values.map((value) => eq(first.column, value)) } };
}
