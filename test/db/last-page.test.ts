import { describe, expect, it } from "vitest";
import { listPage, type ListSource } from "../../src/db/list-page";

/** An in-memory list of `n` rows keyed (i, id-i), served as listTable serves a table. */
function source(n: number, descending: boolean): ListSource<[number, string]> {
  const rows: [number, string][] = Array.from({ length: n }, (_, i) => [i, `id-${i}`]);
  return {
    sort: undefined as never,
    id: undefined as never,
    descending,
    key: (row) => row,
    count: async () => n,
    rows: async (_extra, direction, limit, start) => {
      const ordered = direction === "asc" ? rows : [...rows].reverse();
      return ordered.slice(start as number, (start as number) + limit);
    },
  };
}

describe("page=last", () => {
  it.each([
    // rows, page size, list order: the last page's number and rows, as page=N would give them
    [9, 4, false, 3, [8]],
    [8, 4, false, 2, [4, 5, 6, 7]],
    [3, 100, false, 1, [0, 1, 2]],
    [0, 10, false, 1, []],
    [9, 4, true, 3, [0]],
    [10, 4, true, 3, [1, 0]],
    [4, 4, true, 1, [3, 2, 1, 0]],
  ])("%d rows, %d a page, newest first %s: page %d holds %j", async (n, size, descending, page, keys) => {
    const last = await listPage(source(n, descending), { kind: "last", size });
    expect(last.page).toBe(page);
    expect(last.rows.map(([i]) => i)).toEqual(keys);
    expect(last.hasNext).toBe(false);
    expect(last.hasPrevious).toBe(page > 1);
    // The same rows as asking for that page by number.
    const byNumber = await listPage(source(n, descending), { kind: "offset", page, size });
    expect(last.rows).toEqual(byNumber.rows);
  });
});
