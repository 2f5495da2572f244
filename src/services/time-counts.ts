import { eq, gte, sql, type Column, type SQL } from "drizzle-orm";
import type { Db } from "../db/client";
import { accounts, timeCounts } from "../db/schema";
import { BUCKET_SIZES_MS, bucketsOf, finer, pieces, type Piece } from "../lib/time-buckets";
import { wholeMsBound, type Instant } from "../lib/time";
import { givenFilters } from "./list-counts";
import type { CountQuery, Seek } from "../db/list-page";

/**
 * The timestamps whose time ranges are counted from buckets (db/schema/time-counts): every
 * invoice's and payment's, and each payment status's own `created` buckets (for a status filter
 * with a created range).
 */
export type TimeKey = "invoices.created_at" | "payments.created_at" | "payments.updated_at" | `payments.created_at|status=${string}`;

/** The key of one payment status's `created` buckets. */
export function createdWithStatus(status: string): TimeKey {
  return `payments.created_at|status=${status}`;
}

const LATEST_MS = 8_640_000_000_000_000; // the largest time a Date holds

/**
 * The statement that adds `delta` to the buckets holding `ms`, for the write's own batch; with a
 * `guard`, only when it holds there (as the payment write's other statements). `ms` may be an SQL
 * expression for an integer taken earlier in the batch (a payment write's stamp).
 */
export function countAt(db: Db, accountId: string, key: TimeKey, ms: number | SQL, delta: 1 | -1, guard: SQL = sql`1`) {
  const rows =
    typeof ms === "number"
      ? bucketsOf(ms).map(({ size, start }) => sql`select ${accountId} as a, ${key} as k, ${size} as s, ${start} as b, ${delta} as n`)
      : BUCKET_SIZES_MS.map((size) => sql`select ${accountId} as a, ${key} as k, ${size} as s, (${ms}) - (${ms}) % ${size} as b, ${delta} as n`);
  // The WHERE also keeps SQLite from reading ON CONFLICT as part of the SELECT.
  return db
    .insert(timeCounts)
    .select(sql`select a, k, s, b, n from (${sql.join(rows, sql` union all `)}) where ${guard}`)
    .onConflictDoUpdate({ target: [timeCounts.accountId, timeCounts.key, timeCounts.size, timeCounts.bucket], set: { n: sql`${timeCounts.n} + excluded.n` } });
}

/**
 * The statement that moves one row's count from the buckets holding `from` to those holding `to`
 * (a payment's `updated` moving to its new stamp), touching only the sizes whose bucket changes:
 * a write a second after the last one leaves the 30-day, day and hour buckets alone.
 */
export function countMove(db: Db, accountId: string, key: TimeKey, from: number, to: SQL, guard: SQL = sql`1`) {
  // The old buckets as one JSON parameter, and the new stamp read once: D1 allows 100 parameters.
  const old = JSON.stringify(bucketsOf(from).map(({ size, start }) => [size, start]));
  return db
    .insert(timeCounts)
    .select(
      sql`select ${accountId}, ${key}, p.s, case when m.n = -1 then p.b else t.v - t.v % p.s end, m.n
          from (select (${to}) as v) t,
               (select json_extract(value, '$[0]') as s, json_extract(value, '$[1]') as b from json_each(${old})) p,
               (select -1 as n union all select 1) m
          where t.v - t.v % p.s <> p.b and ${guard}`,
    )
    .onConflictDoUpdate({ target: [timeCounts.accountId, timeCounts.key, timeCounts.size, timeCounts.bucket], set: { n: sql`${timeCounts.n} + excluded.n` } });
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

/** Where a range is counted: a timestamp's buckets (`key`) and, for the edges, its rows (`also` narrows them). */
export interface Buckets {
  accountId: string;
  key: TimeKey;
  table: string;
  column: Column;
  also?: SQL;
}

/**
 * How many rows of the account have `column` in [lo, hi): whole buckets summed, and the two edges
 * shorter than a second counted on the index, in one statement, as a query a list reads in the
 * same round trip as its page.
 */
export function countInRange(db: Db, { accountId, key, table, column, also = sql`1` }: Buckets, [lo, hi]: [number, number]): CountQuery {
  const parts = pieces(lo, hi).map((piece) =>
    piece.kind === "rows"
      ? rowsBetween(accountId, table, column, piece.from, piece.to, also)
      : sql`(select coalesce(sum(n), 0) from time_counts where account_id = ${accountId} and key = ${key} and size = ${piece.size} and bucket >= ${piece.from} and bucket < ${piece.to})`,
  );
  const sum = parts.length === 0 ? sql`0` : sql.join(parts, sql` + `);
  // Read off the account's own row: one row, found by its key (a FROM-less select is not a
  // query drizzle can batch).
  return db.select({ n: sql<number>`${sum}`.mapWith(Number) }).from(accounts).where(eq(accounts.id, accountId));
}

/**
 * Where the row at position `offset` (0-based, by the timestamp, then id) of the range [lo, hi)
 * starts: every row before `from` comes before it, and `skip` rows at or after `from` precede it.
 * Walks the buckets from the range's start, coarse to fine, reading a few hundred rows however
 * deep the offset is; null when the range holds no more than `offset` rows.
 */
export async function seekOffset(db: Db, { accountId, key, table, column, also = sql`1` }: Buckets, [lo, hi]: [number, number], offset: number): Promise<{ from: number; skip: number } | null> {
  let remaining = offset;
  const walk = async (parts: Piece[]): Promise<{ from: number; skip: number } | null> => {
    for (const piece of parts) {
      if (piece.kind === "rows") {
        const n = await countRows(db, accountId, table, column, piece.from, piece.to, also);
        if (remaining < n) return { from: piece.from, skip: remaining };
        remaining -= n;
        continue;
      }
      const buckets = await db.all<{ bucket: number; n: number }>(
        sql`select bucket, n from time_counts where account_id = ${accountId} and key = ${key} and size = ${piece.size} and bucket >= ${piece.from} and bucket < ${piece.to} and n > 0 order by bucket`,
      );
      for (const { bucket, n } of buckets) {
        if (remaining >= n) {
          remaining -= n;
          continue;
        }
        const size = finer(piece.size);
        if (size === null) return { from: bucket, skip: remaining };
        return walk([{ kind: "buckets", size, from: bucket, to: bucket + piece.size }]);
      }
    }
    return null;
  };
  return walk(pieces(lo, hi));
}

/** `seekOffset` as a list's Seek: rows from `from` on, skipping the few left. */
export function seekBy(db: Db, buckets: Buckets, range: [number, number]): Seek {
  return async (offset) => {
    const start = await seekOffset(db, buckets, range, offset);
    return start && { condition: gte(buckets.column, start.from), skip: start.skip };
  };
}

/** `(select count(*) …)` of the account's rows with `column` in [from, to) (and `also`), read on the index. */
function rowsBetween(accountId: string, table: string, column: Column, from: number, to: number, also: SQL): SQL {
  return sql`(select count(*) from ${sql.identifier(table)} where account_id = ${accountId} and ${also} and ${column} >= ${from} and ${column} < ${to})`;
}

async function countRows(db: Db, accountId: string, table: string, column: Column, from: number, to: number, also: SQL): Promise<number> {
  const row = await db.get<{ n: number }>(sql`select ${rowsBetween(accountId, table, column, from, to, also)} as n`);
  return Number(row?.n ?? 0);
}
