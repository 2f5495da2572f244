import { sql, type SQL } from "drizzle-orm";
import type { Db } from "../../db/client";
import type { Seek } from "../../db/list-page";
import { BUCKET_SIZES_MS, finer, pieces } from "./buckets";
import { keysOf, rowsBetween, type Buckets } from "./time";

// `page=N` of a list whose count comes from time buckets starts where the buckets say, instead of
// after an OFFSET over every row before it. Measured (docs/performance.md): page 5,000 of
// 1,000,000 invoices reads 1,140 D1 rows this way and 500,004 as an OFFSET.

/**
 * Where the row at position `offset` (0-based, by the timestamp, then id) of the range [lo, hi)
 * starts, as one statement of one row (`lo`, `skip`): every row before `lo` comes before it, and
 * `skip` rows at or after `lo` precede it; no row when the range holds no more than `offset` rows.
 * A recursive walk down the buckets, coarse to fine, in SQL (one round trip, where a walk from the
 * Worker would take one per bucket size): first the range's pieces in order, each counted as
 * countInRange counts it, until the one that holds the offset; then, inside it, the bucket one
 * size finer that holds it, down to one second. Each step reads at most the 60 (or 24)
 * buckets of one parent, so a walk reads a few hundred rows however deep the offset is.
 * Each state row: the bucket size to read next (null when found), the span of the parent being
 * read, the rows still to skip at the parent's start, and `hit`: [the parent's start, the rows
 * before it within its own parent].
 */
export function seekStatement(
  { accountId, key, plus, count = "n", table, column, also = sql`1`, after }: Buckets,
  [lo, hi]: [number, number],
  offset: number,
): SQL {
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
