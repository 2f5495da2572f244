import { eq, getTableColumns, sql, type Column, type SQL } from "drizzle-orm";
import type { Db } from "../db/client";
import { tenants, timeCounts, type StatusColumn } from "../db/schema";
import { BUCKET_SIZES_MS, bucketsOf, finer, pieces } from "../lib/time-buckets";
import { wholeMsBound, type Instant } from "../lib/time";
import { givenFilters } from "./list-counts";
import type { CountQuery, Seek } from "../db/list-page";

/**
 * The timestamps whose time ranges are counted from buckets (db/schema/time-counts): every
 * invoice's and payment's `created` (a payment's buckets also count its status, by column: a
 * status filter with a created range), and a payment's `updated` as its moves away from `created`
 * (`payments.updated_moves`): -1 in the buckets it left and +1 in those it reached at each event,
 * so that `updated` counts are the `created` buckets plus these, and a new payment, whose
 * `updated` is its `created`, moves none. The payment keys are kept from a mark
 * (services/payment-counts); invoices' in each write's batch.
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
 * (kept on payment buckets only: services/payment-counts), as a SELECT that inserts rows lists them.
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
   * columns), added to the buckets they fall in (services/payment-counts: the payment changes
   * after the mark).
   */
  after?: SQL;
}

/**
 * How many rows of the account have `column` in [lo, hi): whole buckets summed, and the two edges
 * shorter than a second counted on the index, in one statement, as a query a list reads in the
 * same round trip as its page.
 */
export function countInRange(db: Db, { accountId, key, plus, count = "n", table, column, also = sql`1`, after }: Buckets, [lo, hi]: [number, number]): CountQuery {
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
  return db.select({ n: sql<number>`${sum}`.mapWith(Number) }).from(tenants).where(eq(tenants.id, accountId));
}

/**
 * Where the row at position `offset` (0-based, by the timestamp, then id) of the range [lo, hi)
 * starts, as one statement of one row (`lo`, `skip`): every row before `lo` comes before it, and
 * `skip` rows at or after `lo` precede it; no row when the range holds no more than `offset` rows.
 * A recursive walk down the buckets, coarse to fine, in SQL (one round trip, where a walk from the
 * Worker took one per bucket size): first the range's pieces in order, each counted as
 * countInRange counts it, until the one that holds the offset; then, inside it, the bucket one
 * size finer that holds it, down to one second. Each step reads at most the 60 (or 24)
 * buckets of one parent, so a walk reads a few hundred rows however deep the offset is.
 * Each state row: the bucket size to read next (null when found), the span of the parent being
 * read, the rows still to skip at the parent's start, and `hit`: [the parent's start, the rows
 * before it within its own parent].
 */
export function seekStatement({ accountId, key, plus, count = "n", table, column, also = sql`1`, after }: Buckets, [lo, hi]: [number, number], offset: number): SQL {
  // The range's pieces as one JSON list (a compound SELECT of them would pass D1's limit on
  // compound terms), each counted on its buckets or, for an edge under a second, on its rows.
  const parts = pieces(lo, hi).map((piece) => ({ size: piece.kind === "rows" ? null : piece.size, lo: piece.from, hi: piece.to }));
  const from = sql`(value ->> 'lo')`;
  const to = sql`(value ->> 'hi')`;
  const counted = sql`select key as ord, value ->> 'size' as size, ${from} as lo, ${to} as hi, case when value ->> 'size' is null
    then ${rowsBetween(accountId, table, column, from, to, also)}
    else (select coalesce(sum(${sql.identifier(count)}), 0) from time_counts where account_id = ${accountId} and ${keysOf(key, plus)} and size = value ->> 'size' and bucket >= ${from} and bucket < ${to})${
      after ? sql` + (select coalesce(sum(${sql.identifier(count)}), 0) from ${after} where ${keysOf(key, plus)} and at >= ${from} and at < ${to})` : sql``
    } end as n
    from json_each(${JSON.stringify(parts)})`;
  const finerSize = sql.join(
    BUCKET_SIZES_MS.slice(0, -1).map((size) => sql`when ${size} then ${finer(size)}`),
    sql` `,
  );
  const start = sql`(hit ->> 0)`;
  const rem = sql`(rem - (hit ->> 1))`;
  // The bucket of size w.size in [start, start + span) that holds position rem, with the rows
  // before it there (min() takes its row's other columns: no sort).
  // (Each bucket's count summed over the keys first: a `plus` bucket alone may be below zero.)
  const stored = sql`select bucket, ${sql.identifier(count)} as c from time_counts where account_id = ${accountId} and ${keysOf(key, plus)} and size = w.size and bucket >= ${start} and bucket < ${start} + w.span`;
  const added = after
    ? sql` union all select at - at % w.size, ${sql.identifier(count)} from ${after} where ${keysOf(key, plus)} and at >= ${start} and at < ${start} + w.span`
    : sql``;
  const buckets = sql`select bucket, sum(c) as n from (${stored}${added}) group by bucket`;
  const next = sql`(select json_array(min(bucket), before) from (select bucket, n, sum(n) over (order by bucket) - n as before from (${buckets}) where n > 0) where before + n > ${rem})`;
  return sql`with recursive seek_pieces as (${counted}),
seek_walk(size, span, rem, hit) as (
  select size, hi - lo, ${offset}, json_array(lo, before) from (select ord, size, lo, hi, min(ord), before from (select *, sum(n) over (order by ord) - n as before from seek_pieces) where before + n > ${offset})
  union all
  select case size ${finerSize} end, size, ${rem}, ${next} from seek_walk w where size is not null
)
select hit ->> 0 as lo, rem - (hit ->> 1) as skip from seek_walk where size is null and hit ->> 0 is not null`;
}

/**
 * `seekStatement` as a list's Seek: the page's query starts at `lo` and skips `skip`, both read
 * from the walk as a common table expression of the page's own query (one round trip).
 */
export function seekBy(db: Db, buckets: Buckets, range: [number, number]): Seek {
  return (offset) => {
    const walk = db.$with("seek", { lo: sql<number>`lo`, skip: sql<number>`skip` }).as(seekStatement(buckets, range, offset));
    return { with: walk, condition: sql`${buckets.column} >= (select lo from ${walk})`, skip: sql`coalesce((select skip from ${walk}), 0)` };
  };
}

/** `key = …`, or `key in (…, …)` with the buckets added to it. */
function keysOf(key: TimeKey, plus?: TimeKey): SQL {
  return plus ? sql`key in (${key}, ${plus})` : sql`key = ${key}`;
}

/** `(select count(*) …)` of the account's rows with `column` in [from, to) (and `also`), read on the index. */
function rowsBetween(accountId: string, table: string, column: Column, from: number | SQL, to: number | SQL, also: SQL): SQL {
  return sql`(select count(*) from ${sql.identifier(table)} where account_id = ${accountId} and ${also} and ${column} >= ${from} and ${column} < ${to})`;
}
