import { describe, expect, it } from "vitest";
import { withinBytes } from "../../src/lib/within-bytes";

describe("withinBytes", () => {
  it.each([
    ["all fit", [3, 3, 3], 10, true, 3],
    ["up to the one that passes the budget", [4, 4, 2, 1], 9, true, 2],
    ["the first however large", [20, 1], 10, true, 1],
    ["none, when the first does not fit and one is not owed", [20, 1], 10, false, 0],
    ["none of none", [], 10, true, 0],
  ])("%s", (_name, sizes, budget, atLeastOne, n) => {
    expect(withinBytes(sizes, budget, atLeastOne)).toBe(n);
  });
});
