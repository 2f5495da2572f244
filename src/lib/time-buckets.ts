/**
 * Counting rows in a time range without reading them: each row's timestamp is counted in one
 * bucket of each size below (30 days down to 1 second), and a range is the sum of the whole
 * buckets it holds, coarsest first, plus at most two spans shorter than a second at its edges,
 * which are counted on the index. Pure.
 */
export const BUCKET_SIZES_MS = [30 * 86_400_000, 86_400_000, 3_600_000, 60_000, 1_000] as const;

/** Whole buckets of one size: starts from `from` (inclusive) to `to` (exclusive). */
export interface BucketRun {
  size: number;
  from: number;
  to: number;
}

export interface Decomposition {
  runs: BucketRun[];
  /** Half-open [from, to) spans, each inside one second, left to count on the rows. */
  rest: [number, number][];
}

/** The bucket of each size that holds `ms`. */
export function bucketsOf(ms: number): { size: number; start: number }[] {
  return BUCKET_SIZES_MS.map((size) => ({ size, start: Math.floor(ms / size) * size }));
}

/** Splits the half-open range [lo, hi) of integer ms into whole buckets and short edges. */
export function decompose(lo: number, hi: number, level = 0): Decomposition {
  if (lo >= hi) return { runs: [], rest: [] };
  if (level === BUCKET_SIZES_MS.length) return { runs: [], rest: [[lo, hi]] };
  const size = BUCKET_SIZES_MS[level]!;
  const from = Math.ceil(lo / size) * size;
  const to = Math.floor(hi / size) * size;
  if (from >= to) return decompose(lo, hi, level + 1);
  const left = decompose(lo, from, level + 1);
  const right = decompose(to, hi, level + 1);
  return { runs: [...left.runs, { size, from, to }, ...right.runs], rest: [...left.rest, ...right.rest] };
}

/** A piece of a range: whole buckets of one size, or a short edge to count on the rows. */
export type Piece = { kind: "buckets"; size: number; from: number; to: number } | { kind: "rows"; from: number; to: number };

/** The same split as `decompose`, as pieces in time order, for walking a range from its start. */
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
