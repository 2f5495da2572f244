import { describe, expect, it } from "vitest";
import { bySize, STATEMENT_TEXT } from "../../src/webhooks/outbox";

const rows = (...sizes: number[]) => sizes.map((size, i) => ({ id: i, body: "x".repeat(size) }));
const ids = (groups: { id: number }[][]) => groups.map((group) => group.map((row) => row.id));
const S = STATEMENT_TEXT;

describe("the outbox's statements, by size", () => {
  it.each([
    ["no rows: no statement", [], []],
    ["small bodies: one statement", [10, 20, 30], [[0, 1, 2]]],
    ["exactly the limit: one statement", [S / 2, S / 2], [[0, 1]]],
    ["one character over: two", [S / 2, S / 2 + 1], [[0], [1]]],
    ["a body over the limit on its own", [10, S + 1, 10], [[0], [1], [2]]],
    ["in order, filling each statement", [S - 10, 10, 1, S, 5], [[0, 1], [2], [3], [4]]],
  ])("%s", (_, sizes, expected) => {
    expect(ids(bySize(rows(...(sizes as number[]))))).toEqual(expected);
  });
});
