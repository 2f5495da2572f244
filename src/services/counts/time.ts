import { eq, getTableColumns, sql, type Column, type SQL } from "drizzle-orm";
import type { Db } from "../../db/client";
import { tenants, timeCounts, type StatusColumn } from "../../db/schema";
import { bucketsOf, pieces } from "./buckets";
import { wholeMsBound, type Instant } from "../../lib/time";
import { givenFilters } from "./stored";
import type { CountQuery } from "../../db/list-page";

/**
 * The timestamps whose time ranges are counted from buckets (db/schema/time-counts): every
 * invoice's and payment's `created` (a payment's buckets also count its status, by column: a
 * status filter with a created range), and a payment's `updated` as its moves away from `created`
 * (`payments.updated_moves`): -1 in the buckets it left and +1 in those it reached at each event,
 * so that `updated` counts are the `created` buckets plus these, and a new payment, whose
 * `updated` is its `created`, moves none. The payment keys are kept from a mark
 * (./payments.ts); invoices' in each write's batch.
 */
export type TimeKey = "invoices.created_at" | "payments.created_at" | "payments.updated_moves";

/** A count column of a bucket: `n` (every row) or a payment status's (db/schema/status-counts). */
export type CountColumn = "n" | StatusColumn;

/** What a write adds to each count column of a bucket (a column left out: nothing). */
export type Deltas = Partial<Record<CountColumn, number>>;

const LATEST_MS = 8_640_000_000_000_000; // the largest time a Date holds

/**
 * The count columns (every column between the key and `counted_to`), in the table's order, as an
 * insert lists them; list_counts has the same ones (`n` and db/schema/status-counts).
 */
export const COUNT_COLUMNS: string[] = Object.values(getTableColumns(timeCounts))
  .map((column) => column.name)
  .filter((name) => !["account_id", "key", "size", "bucket", "counted_to"].includes(name));

/**
 * `<delta> as <column>` for every count column, in the table's order, then a null `counted_to`
 * (kept on payment buckets only: ./payments.ts), as a SELECT that inserts rows lists them.
 */
function deltaColumns(deltas: Deltas): SQL {
  const counts = COUNT_COLUMNS.map((column) => sql`${sql.raw(String(Math.trunc(deltas[column as CountColumn] ?? 0)))} as ${sql.identifier(column)}`);
  return sql.join([...counts, sql`null as counted_to`], sql`, `);
}

/** On an existing count row, every count column plus the insert's. */
export const addedOn = () => Object.fromEntries(COUNT_COLUMNS.map((column) => [column, sql`${sql.identifier(column)} + excluded.${sql.identifier(column)}`]));

const bucketKey = [timeCounts.accountId, timeCounts.key, timeCounts.size, timeCounts.bucket];

/**
 * The statement that adds `deltas` to the buckets holding `ms`, for the write's own batch (an
 * invoice's); only where `when` holds at that point of the batch, when given.
 */
export function countAt(db: Db, accountId: string, key: TimeKey, ms: number, deltas: Deltas, when: SQL = sql`true`) {
  const columns = deltaColumns(deltas);
  const rows = bucketsOf(ms).map(({ size, start }) => sql`select ${accountId} as a, ${key} as k, ${size} as s, ${start} as b, ${columns}`);
  // The WHERE also keeps SQLite from reading ON CONFLICT as part of the SELECT.
  return db
    .insert(timeCounts)
    .select(sql`select * from (${sql.join(rows, sql` union all `)}) where ${when}`)
    .onConflictDoUpdate({ target: bucketKey, set: addedOn() });
}

/** The integer-ms half-open range [lo, hi) that `<prefix>__gt|gte|lt|lte` filters select. */
export function rangeOf(prefix: string, filters: Record<string, Instant | undefined>): [number, number] {
  let lo = 0;
  let hi = LATEST_MS;
  const at = (op: "gt" | "gte" | "lt" | "lte") => filters[`${prefix}__${op}`];
  if (at("gte")) lo = Math.max(lo, wholeMsBound("gte", at("gte")!));
  if (at("gt")) lo = Math.max(lo, wholeMsBound("gt", at("gt")!) + 1);
  if (at("lt")) hi = Math.min(hi, wholeMsBound("lt", at("lt")!));
  if (at("lte")) hi = Math.min(hi, wholeMsBound("lte", at("lte")!) + 1);
  return [lo, hi];
}

/**
 * Which timestamp's buckets answer a list's `count`: when its only filters are bounds on one
 * timestamp (`ordering` aside). Pure.
 */
export function timeCountField(filters: object, fields: readonly string[]): string | null {
  const given = givenFilters(filters);
  if (given.length === 0) return null;
  const prefixes = new Set(given.map(([name]) => name.replace(/__(gt|gte|lt|lte)$/, "")));
  const [prefix] = prefixes;
  const onlyBounds = given.every(([name]) => /__(gt|gte|lt|lte)$/.test(name));
  return onlyBounds && prefixes.size === 1 && fields.includes(prefix!) ? prefix! : null;
}

/**
 * Where a range is counted: a timestamp's buckets (`key`, with `plus`'s added to them; their
 * `count` column, `n` unless given) and, for the edges, its rows (`also` narrows them).
 */
export interface Buckets {
  accountId: string;
  key: TimeKey;
  plus?: TimeKey;
  count?: CountColumn;
  table: string;
  column: Column;
  also?: SQL;
  /**
   * Counts not in the buckets yet, as rows of (key, at: the stamp they count at, and the count
   * columns), added to the buckets they fall in (./payments.ts: the payment changes
   * after the mark).
   */
  after?: SQL;
}

/**
 * How many rows of the account have `column` in [lo, hi): whole buckets summed, and the two edges
 * shorter than a second counted on the index, in one statement, as a query a list reads in the
 * same round trip as its page.
 */
export function countInRange(
  db: Db,
  { accountId, key, plus, count = "n", table, column, also = sql`1`, after }: Buckets,
  [lo, hi]: [number, number],
): CountQuery {
  const all = pieces(lo, hi);
  const parts = all.map((piece) =>
    piece.kind === "rows"
      ? rowsBetween(accountId, table, column, piece.from, piece.to, also)
      : sql`(select coalesce(sum(${sql.identifier(count)}), 0) from time_counts where account_id = ${accountId} and ${keysOf(key, plus)} and size = ${piece.size} and bucket >= ${piece.from} and bucket < ${piece.to})`,
  );
  const inBuckets = all.filter((piece) => piece.kind === "buckets").map((piece) => sql`(at >= ${piece.from} and at < ${piece.to})`);
  if (after && inBuckets.length > 0) {
    parts.push(sql`(select coalesce(sum(${sql.identifier(count)}), 0) from ${after} where ${keysOf(key, plus)} and (${sql.join(inBuckets, sql` or `)}))`);
  }
  const sum = parts.length === 0 ? sql`0` : sql.join(parts, sql` + `);
  // Read off the account's own row: one row, found by its key (a FROM-less select is not a
  // query drizzle can batch).
  return db
    .select({ n: sql<number>`${sum}`.mapWith(Number) })
    .from(tenants)
    .where(eq(tenants.id, accountId));
}

/** `key = …`, or `key in (…, …)` with the buckets added to it. */
export function keysOf(key: TimeKey, plus?: TimeKey): SQL {
  return plus ? sql`key in (${key}, ${plus})` : sql`key = ${key}`;
}

/** `(select count(*) …)` of the account's rows with `column` in [from, to) (and `also`), read on the index. */
export function rowsBetween(accountId: string, table: string, column: Column, from: number | SQL, to: number | SQL, also: SQL): SQL {
  return sql`(select count(*) from ${sql.identifier(table)} where account_id = ${accountId} and ${also} and ${column} >= ${from} and ${column} < ${to})`;
}
