import { cursorText, cursorValue } from "./crypto";
/**
 * Page-number paging with keyset links. `page=N` is served by offset (direct access); the `next`
 * and `previous` links carry an opaque cursor holding the sort key of the page's edge row, so
 * following them costs the same at any depth.
 */
import type { PageBounds } from "./list-bounds";

export interface PageCursor {
  /** The page number the cursor leads to (for the links it makes in turn). */
  page: number;
  /** "after": rows after `key`, ascending; "before": rows before `key`. */
  dir: "after" | "before";
  key: [number, string];
}

export type PageRequest =
  { kind: "offset"; page: number; size: number } | { kind: "last"; size: number } | { kind: "cursor"; cursor: PageCursor; size: number };

export type PagingError = "Invalid page." | "Invalid cursor.";

/** Django's QueryDict: a repeated parameter reads as its last value. */
const lastValue = (query: URLSearchParams, name: string): string | null => query.getAll(name).at(-1) ?? null;

/**
 * A whole number as Python's `int()` reads a query value (spaces around it, a sign, `_` between
 * digits), which is how DRF reads `page` and `page_size`; null for anything else.
 */
export function pythonInt(text: string): number | null {
  const match = /^\s*([+-]?)(\d+(?:_\d+)*)\s*$/.exec(text);
  if (!match) return null;
  const digits = match[2]!.replace(/_/g, "").replace(/^0+(?=\d)/, "");
  // Past 15 digits the exact value no longer matters: a page that far is past the end, a size is clamped.
  const value = digits.length > 15 ? Number.MAX_SAFE_INTEGER : Number(digits);
  return match[1] === "-" ? -value : value;
}

/**
 * Reads `page`, `page_size` and `cursor` as Django REST framework's PageNumberPagination reads
 * page and size: the last value of each counts, `page=last` is the last page, an empty `cursor` is none.
 */
export function readPageRequest(query: URLSearchParams, bounds: PageBounds): PageRequest | PagingError {
  const size = readPageSize(lastValue(query, "page_size"), bounds);
  const cursorText = lastValue(query, "cursor");
  if (cursorText) {
    const cursor = decodePageCursor(cursorText);
    return cursor ? { kind: "cursor", cursor, size } : "Invalid cursor.";
  }
  const pageText = lastValue(query, "page");
  if (pageText === null) return { kind: "offset", page: 1, size };
  if (pageText === "last") return { kind: "last", size };
  const page = pythonInt(pageText);
  if (page === null || page < 1) return "Invalid page.";
  // A page this far is past the end of any list (a shard holds far fewer rows).
  return page <= MAX_PAGE ? { kind: "offset", page, size } : "Invalid page.";
}

const MAX_PAGE = 1_000_000_000;

/** DRF semantics: a missing, invalid, zero or negative size is the list's default, one over its maximum is clamped. */
export function readPageSize(text: string | null, bounds: PageBounds): number {
  const size = text === null ? null : pythonInt(text);
  if (size === null || size < 1) return bounds.default;
  return Math.min(size, bounds.max);
}

export function encodePageCursor(cursor: PageCursor): string {
  return cursorText([cursor.page, cursor.dir === "after" ? "a" : "b", cursor.key[0], cursor.key[1]]);
}

export function decodePageCursor(text: string): PageCursor | null {
  try {
    const value = cursorValue(text);
    if (!Array.isArray(value) || value.length !== 4) return null;
    const [page, dir, sortKey, id] = value;
    if (!Number.isSafeInteger(page) || page < 1) return null;
    if (dir !== "a" && dir !== "b") return null;
    if (!Number.isSafeInteger(sortKey) || typeof id !== "string" || id.length > 64) return null;
    return { page, dir: dir === "a" ? "after" : "before", key: [sortKey, id] };
  } catch {
    return null;
  }
}

export interface PageLinks {
  next: string | null;
  previous: string | null;
}

/**
 * Builds absolute links that keep every other query parameter of the request. Page 1 drops the
 * paging parameters, as DRF does.
 */
export function pageLinks(
  url: URL,
  page: number,
  edges: { first: [number, string]; last: [number, string] } | null,
  hasNext: boolean,
  hasPrevious: boolean,
): PageLinks {
  const link = (cursor: PageCursor | null): string => {
    const target = new URL(url);
    target.searchParams.delete("page");
    target.searchParams.delete("cursor");
    if (cursor) target.searchParams.set("cursor", encodePageCursor(cursor));
    return target.toString();
  };
  const next = hasNext && edges ? link({ page: page + 1, dir: "after", key: edges.last }) : null;
  let previous: string | null = null;
  if (hasPrevious) {
    previous = page - 1 <= 1 || !edges ? link(null) : link({ page: page - 1, dir: "before", key: edges.first });
  }
  return { next, previous };
}
