import { describe, expect, it } from "vitest";
import { decide, keyProblem, storable, type Decision, type KeyRow } from "../../src/idempotency";

const mine = { token: "t-mine", requestHash: "h-mine" };

describe("decide", () => {
  const cases: [string, KeyRow, Decision][] = [
    ["a key this request claimed", { token: "t-mine", requestHash: "h-mine", status: null }, "run"],
    ["a key another request holds, same request", { token: "t-other", requestHash: "h-mine", status: null }, "in_progress"],
    ["a key another request holds, another request", { token: "t-other", requestHash: "h-other", status: null }, "mismatch"],
    ["an answered key, same request", { token: "t-other", requestHash: "h-mine", status: 201 }, "replay"],
    ["an answered 400, same request", { token: "t-other", requestHash: "h-mine", status: 400 }, "replay"],
    ["an answered key, another request", { token: "t-other", requestHash: "h-other", status: 201 }, "mismatch"],
  ];
  it.each(cases)("%s: %s", (_label, row, expected) => {
    expect(decide(row, mine)).toBe(expected);
  });
});

describe("keyProblem", () => {
  it.each([
    ["a", true],
    ["order-1001/try 2", true],
    ["~".repeat(255), true],
    ["", false],
    ["x".repeat(256), false],
    ["tab\there", false],
    ["é", false],
    ["line\nbreak", false],
  ])("%j is a key: %s", (key, ok) => {
    expect(keyProblem(key) === null).toBe(ok);
  });
});

describe("storable", () => {
  it.each([
    [200, true],
    [201, true],
    [202, true],
    [400, true],
    [403, true],
    [404, true],
    [409, false],
    [413, true],
    [422, true],
    [429, false],
    [500, false],
    [503, false],
  ])("%i is kept with its key: %s", (status, kept) => {
    expect(storable(status)).toBe(kept);
  });
});
