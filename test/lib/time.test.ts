import { describe, expect, it } from "vitest";
import { parseInstant, toIso, wholeMsBound } from "../../src/lib/time";

const ms = (iso: string) => Date.parse(iso);

describe("parseInstant", () => {
  it.each([
    ["2026-11-21T10:15:30.123Z", ms("2026-11-21T10:15:30.123Z"), false],
    ["2026-11-21T10:15:30Z", ms("2026-11-21T10:15:30.000Z"), false],
    ["2026-11-21T10:15:30", ms("2026-11-21T10:15:30.000Z"), false],
    ["2026-11-21T10:15", ms("2026-11-21T10:15:00.000Z"), false],
    ["2026-11-21 10:15:30", ms("2026-11-21T10:15:30.000Z"), false],
    ["2026-11-21", ms("2026-11-21T00:00:00.000Z"), false],
    ["2026-11-21T10:15:30.1Z", ms("2026-11-21T10:15:30.100Z"), false],
    ["2026-11-21T10:15:30.1234Z", ms("2026-11-21T10:15:30.123Z"), true],
    ["2026-11-21T10:15:30.123000Z", ms("2026-11-21T10:15:30.123Z"), false],
    ["2026-11-21T10:15:30.123456789Z", ms("2026-11-21T10:15:30.123Z"), true],
    ["2026-11-21T10:15:30.123000001", ms("2026-11-21T10:15:30.123Z"), true],
    ["2026-11-21T11:15:30.123+01:00", ms("2026-11-21T10:15:30.123Z"), false],
    ["2026-11-21T05:15:30.123-0500", ms("2026-11-21T10:15:30.123Z"), false],
    ["2026-11-21T11:15:30+01", ms("2026-11-21T10:15:30.000Z"), false],
    // An unescaped `+` in a query string arrives as a space.
    ["2026-11-21T11:15:30.123 01:00", ms("2026-11-21T10:15:30.123Z"), false],
    // Django's parse_datetime: one-digit fields, white space before the zone.
    ["2026-1-2T9:5:3Z", ms("2026-01-02T09:05:03.000Z"), false],
    ["2026-11-21T10:15:30 Z", ms("2026-11-21T10:15:30.000Z"), false],
    ["2026-1-2", ms("2026-01-02T00:00:00.000Z"), false],
    // Years below 100 are those years, not 1900 and after.
    ["0026-11-21T10:15:30Z", Date.UTC(2000, 0, 1) - 0 + (new Date("0026-11-21T10:15:30Z").getTime() - Date.UTC(2000, 0, 1)), false],
  ])("reads %s", (text, expectedMs, subMs) => {
    expect(parseInstant(text)).toEqual({ ms: expectedMs, subMs });
  });

  it.each([
    "",
    "yesterday",
    "2026-13-01",
    "2026-02-30",
    "2026-11-21T24:00:00Z",
    "2026-11-21T10:60",
    "2026-11-21T10:15:30+25:00",
    "21/11/2026",
    "0000-01-01",
    "0000-01-01T00:00:00Z",
    "2026-011-01",
    "2026-11-21T100:15",
    "2026-11-21T10:15:30.Z",
    "1763720130",
  ])("refuses %j", (text) => {
    expect(parseInstant(text)).toBeNull();
  });
});

describe("wholeMsBound keeps comparisons exact", () => {
  const stored = ms("2026-11-21T10:15:30.123Z");
  const compare = {
    gt: (a: number, b: number) => a > b,
    gte: (a: number, b: number) => a >= b,
    lt: (a: number, b: number) => a < b,
    lte: (a: number, b: number) => a <= b,
  };
  // [filter value, op, does a row stored at .123 match?]
  it.each([
    ["2026-11-21T10:15:30.1234Z", "gte", false],
    ["2026-11-21T10:15:30.1234Z", "gt", false],
    ["2026-11-21T10:15:30.1234Z", "lt", true],
    ["2026-11-21T10:15:30.1234Z", "lte", true],
    ["2026-11-21T10:15:30.1229Z", "gte", true],
    ["2026-11-21T10:15:30.1229Z", "gt", true],
    ["2026-11-21T10:15:30.1229Z", "lt", false],
    ["2026-11-21T10:15:30.1229Z", "lte", false],
    ["2026-11-21T10:15:30.123Z", "gte", true],
    ["2026-11-21T10:15:30.123Z", "gt", false],
    ["2026-11-21T10:15:30.123Z", "lt", false],
    ["2026-11-21T10:15:30.123Z", "lte", true],
    ["2026-11-21T10:15:30.123000000Z", "lte", true],
    ["2026-11-21T10:15:30.123000001Z", "lte", true],
    ["2026-11-21T10:15:30.122999999Z", "lte", false],
  ] as const)("%s %s", (text, op, matches) => {
    const bound = wholeMsBound(op, parseInstant(text)!);
    expect(compare[op](stored, bound)).toBe(matches);
  });
});

describe("toIso", () => {
  it("always shows milliseconds and Z", () => {
    expect(toIso(ms("2026-11-21T10:15:30Z"))).toBe("2026-11-21T10:15:30.000Z");
  });
});
