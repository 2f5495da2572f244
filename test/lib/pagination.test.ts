import { describe, expect, it } from "vitest";
import { decodePageCursor, encodePageCursor, pageLinks, readPageRequest, readPageSize } from "../../src/lib/pagination";
import { LARGEST_ROW_BYTES, LIST_PAGE_BYTES, pageBounds } from "../../src/lib/list-bounds";

const WIDE = { max: 1000, default: 100 };

const query = (text: string) => new URLSearchParams(text);

describe("readPageRequest", () => {
  it.each([
    ["", { kind: "offset", page: 1, size: 100 }],
    ["page=3", { kind: "offset", page: 3, size: 100 }],
    ["page=2&page_size=5", { kind: "offset", page: 2, size: 5 }],
    ["page=3&page=2", { kind: "offset", page: 2, size: 100 }],
    ["page=%202%20", { kind: "offset", page: 2, size: 100 }],
    ["page=%2B2", { kind: "offset", page: 2, size: 100 }],
    ["page=1_0", { kind: "offset", page: 10, size: 100 }],
    ["page=last&page_size=7", { kind: "last", size: 7 }],
    ["cursor=&page=2", { kind: "offset", page: 2, size: 100 }],
  ])("reads %j", (text, expected) => {
    expect(readPageRequest(query(text), WIDE)).toEqual(expected);
  });

  it.each(["page=0", "page=-1", "page=abc", "page=1.5", "page=", "page=Last", "page=99999999999", "page=1__0", "page=２"])("refuses %s", (text) => {
    expect(readPageRequest(query(text), WIDE)).toBe("Invalid page.");
  });

  it("refuses a cursor it did not make", () => {
    expect(readPageRequest(query("cursor=bm9wZQ"), WIDE)).toBe("Invalid cursor.");
    expect(readPageRequest(query("cursor=%%%"), WIDE)).toBe("Invalid cursor.");
  });
});

describe("readPageSize", () => {
  it.each([
    [null, 100],
    ["1", 1],
    ["1000", 1000],
    ["1001", 1000],
    ["999999", 1000],
    ["0", 100],
    ["-5", 100],
    ["ten", 100],
    ["", 100],
    [" 7 ", 7],
    ["+7", 7],
    ["99999999999", 1000],
    ["99999999999999999999999", 1000],
    ["-0", 100],
  ])("%j gives %d", (text, size) => {
    expect(readPageSize(text, WIDE)).toBe(size);
  });

  it.each([
    [null, 18],
    ["18", 18],
    ["19", 18],
    ["5", 5],
    ["0", 18],
  ])("a list whose maximum is below 100 defaults to it: %j gives %d", (text, size) => {
    expect(readPageSize(text, { max: 18, default: 18 })).toBe(size);
  });
});

describe("each list's bounds", () => {
  it.each(Object.keys(LARGEST_ROW_BYTES) as (keyof typeof LARGEST_ROW_BYTES)[])(
    "%s: its largest page, and the row read past it, fit the page's bytes",
    (list) => {
      const { max, default: fallback } = pageBounds(list);
      expect((max + 1) * LARGEST_ROW_BYTES[list]).toBeLessThanOrEqual(LIST_PAGE_BYTES);
      expect(max === 1000 || (max + 2) * LARGEST_ROW_BYTES[list] > LIST_PAGE_BYTES).toBe(true);
      expect(fallback).toBe(Math.min(100, max));
    },
  );

  it("are these (docs/interface.md states them)", () => {
    expect(Object.fromEntries(Object.keys(LARGEST_ROW_BYTES).map((list) => [list, pageBounds(list as keyof typeof LARGEST_ROW_BYTES).max]))).toEqual({
      accounts: 1000,
      counterparties: 1000,
      invoices: 1000,
      payments: 18,
      subscriptions: 199,
      deliveries: 14,
      feed: 14,
      replays: 1000,
    });
  });
});

describe("cursors", () => {
  it("round-trip", () => {
    const cursor = { page: 7, dir: "before" as const, key: [1763720130123, "inv_abc"] as [number, string] };
    expect(decodePageCursor(encodePageCursor(cursor))).toEqual(cursor);
  });

  it("are URL-safe", () => {
    expect(encodePageCursor({ page: 2, dir: "after", key: [1, "x".repeat(40)] })).toMatch(/^[A-Za-z0-9_-]+$/);
  });
});

describe("pageLinks", () => {
  const url = new URL("https://api.test/v1/invoices/?invoice_number=a&invoice_number=b&page=2&page_size=10");
  const edges = { first: [1, "inv_first"] as [number, string], last: [2, "inv_last"] as [number, string] };

  it("keeps the filters and moves by cursor", () => {
    const links = pageLinks(url, 2, edges, true, true);
    const next = new URL(links.next!);
    expect(next.searchParams.getAll("invoice_number")).toEqual(["a", "b"]);
    expect(next.searchParams.get("page_size")).toBe("10");
    expect(next.searchParams.get("page")).toBeNull();
    expect(decodePageCursor(next.searchParams.get("cursor")!)).toEqual({ page: 3, dir: "after", key: [2, "inv_last"] });
    // Page 1 is the plain URL, as DRF links it.
    expect(new URL(links.previous!).searchParams.get("cursor")).toBeNull();
  });

  it("is null at the ends", () => {
    expect(pageLinks(url, 1, edges, false, false)).toEqual({ next: null, previous: null });
  });

  it("links back by cursor past page 2", () => {
    const previous = new URL(pageLinks(url, 5, edges, false, true).previous!);
    expect(decodePageCursor(previous.searchParams.get("cursor")!)).toEqual({ page: 4, dir: "before", key: [1, "inv_first"] });
  });
});
