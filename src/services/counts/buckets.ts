/**
 * Counting rows in a time range without reading them: each row's timestamp is counted in one
 * bucket of each size below (a day down to a second), and a range is the sum of the whole
 * buckets it holds, coarsest first, plus at most two spans shorter than a second at its edges,
 * which are counted on the index. Each size is one row written per counted row: a year's range
 * sums 365 day buckets (rows read), which costs D1 far less than a fifth bucket written per change.
 * Pure.
 */
export const BUCKET_SIZES_MS = [86_400_000, 3_600_000, 60_000, 1_000] as const;

/** The bucket of each size that holds `ms`. */
export function bucketsOf(ms: number): { size: number; start: number }[] {
  return BUCKET_SIZES_MS.map((size) => ({ size, start: Math.floor(ms / size) * size }));
}

/** A piece of a range: whole buckets of one size, or a short edge to count on the rows. */
export type Piece = { kind: "buckets"; size: number; from: number; to: number } | { kind: "rows"; from: number; to: number };

/**
 * Splits the half-open range [lo, hi) of integer ms into whole buckets, coarsest where they fit,
 * and at most two edges shorter than a second, in time order.
 */
export function pieces(lo: number, hi: number, level = 0): Piece[] {
  if (lo >= hi) return [];
  if (level === BUCKET_SIZES_MS.length) return [{ kind: "rows", from: lo, to: hi }];
  const size = BUCKET_SIZES_MS[level]!;
  const from = Math.ceil(lo / size) * size;
  const to = Math.floor(hi / size) * size;
  if (from >= to) return pieces(lo, hi, level + 1);
  return [...pieces(lo, from, level + 1), { kind: "buckets", size, from, to }, ...pieces(to, hi, level + 1)];
}

/** The next finer bucket size, or null below a second. */
export function finer(size: number): number | null {
  const index = BUCKET_SIZES_MS.indexOf(size as (typeof BUCKET_SIZES_MS)[number]);
  return BUCKET_SIZES_MS[index + 1] ?? null;
}
