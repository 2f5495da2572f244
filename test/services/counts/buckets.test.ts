import { describe, expect, it } from "vitest";
import { BUCKET_SIZES_MS, bucketsOf, finer, pieces } from "../../../src/services/counts/buckets";

const DAY = 86_400_000;
const T = Date.UTC(2026, 0, 1) + 7; // on no bucket boundary

/** Every ms of [lo, hi) is covered exactly once by the runs and the rest. Checked by counting points. */
function covers(lo: number, hi: number, points: number[]): boolean {
  const parts = pieces(lo, hi);
  return points.every((p) => {
    const inRange = p >= lo && p < hi ? 1 : 0;
    const hits = parts.filter((part) => p >= part.from && p < part.to).length;
    return hits === inRange;
  });
}

describe("pieces", () => {
  const ranges: [number, number][] = [
    [T, T + 1],
    [T + 999, T + 1001],
    [T + 1, T + 59_999],
    [T - 1, T + 3 * DAY + 5],
    [T + 12_345, T + 400 * DAY + 678],
    [0, Date.UTC(2200, 0, 1)],
    [T + 5, T + 5],
    [T + 5, T + 4],
  ];
  it.each(ranges)("[%i, %i) is covered exactly once", (lo, hi) => {
    const points = [lo - 1, lo, lo + 1, hi - 1, hi, hi + 1, Math.floor((lo + hi) / 2), lo + 999, lo + 60_000, hi - 60_001];
    for (let i = 0; i < 40; i++) points.push(lo + Math.floor(((hi - lo) * i) / 40));
    expect(covers(lo, hi, points)).toBe(true);
  });

  it.each(ranges)("[%i, %i) leaves only edges shorter than a second, and few runs", (lo, hi) => {
    const parts = pieces(lo, hi);
    const rest = parts.filter((part) => part.kind === "rows");
    const runs = parts.flatMap((part) => (part.kind === "buckets" ? [part] : []));
    expect(rest.length).toBeLessThanOrEqual(2);
    for (const { from, to } of rest) expect(Math.floor(from / 1000)).toBe(Math.floor((to - 1) / 1000));
    expect(runs.length).toBeLessThanOrEqual(2 * BUCKET_SIZES_MS.length - 1);
    for (const run of runs) expect([run.from % run.size, run.to % run.size]).toEqual([0, 0]);
  });

  it("puts a timestamp in one bucket of each size, aligned", () => {
    const buckets = bucketsOf(T + 3 * DAY + 4_321);
    expect(buckets.map((b) => b.size)).toEqual([...BUCKET_SIZES_MS]);
    for (const { size, start } of buckets) {
      expect(start % size).toBe(0);
      expect(T + 3 * DAY + 4_321 - start).toBeLessThan(size);
    }
  });
});

describe("pieces in order", () => {
  it.each([
    [T, T + 1],
    [T - 1, T + 3 * DAY + 5],
    [T + 12_345, T + 400 * DAY + 678],
  ])("[%i, %i) comes in time order, without gaps", (lo, hi) => {
    const parts = pieces(lo, hi);
    expect(parts[0]!.from).toBe(lo);
    expect(parts.at(-1)!.to).toBe(hi);
    for (let i = 1; i < parts.length; i++) expect(parts[i]!.from).toBe(parts[i - 1]!.to);
  });

  it("steps to the next finer size, and none below a second", () => {
    expect(BUCKET_SIZES_MS.map(finer)).toEqual([...BUCKET_SIZES_MS.slice(1), null]);
  });
});
