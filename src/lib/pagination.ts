/**
 * Page-number paging with keyset links. `page=N` is served by offset (direct access); the `next`
 * and `previous` links carry an opaque cursor holding the sort key of the page's edge row, so
 * following them costs the same at any depth.
 */
export const DEFAULT_PAGE_SIZE = 100;
export const MAX_PAGE_SIZE = 1000;

export interface Cursor {
  /** The page number the cursor leads to (for the links it makes in turn). */
  page: number;
  /** "after": rows after `key`, ascending; "before": rows before `key`. */
  dir: "after" | "before";
  key: [number, string];
}

export type PageRequest =
  | { kind: "offset"; page: number; size: number }
  | { kind: "cursor"; cursor: Cursor; size: number };

export type PagingError = "Invalid page." | "Invalid cursor.";

/** Reads `page`, `page_size` and `cursor` the way Django REST framework reads page and size. */
export function readPageRequest(query: URLSearchParams): PageRequest | PagingError {
  const size = readPageSize(query.get("page_size"));
  const cursorText = query.get("cursor");
  if (cursorText !== null) {
    const cursor = decodeCursor(cursorText);
    return cursor ? { kind: "cursor", cursor, size } : "Invalid cursor.";
  }
  const pageText = query.get("page");
  if (pageText === null) return { kind: "offset", page: 1, size };
  if (!/^\d{1,9}$/.test(pageText)) return "Invalid page.";
  const page = Number(pageText);
  return page >= 1 ? { kind: "offset", page, size } : "Invalid page.";
}

/** DRF semantics: a missing or invalid size is the default, one over the maximum is clamped. */
export function readPageSize(text: string | null): number {
  if (text === null || !/^\d{1,9}$/.test(text)) return DEFAULT_PAGE_SIZE;
  const size = Number(text);
  if (size < 1) return DEFAULT_PAGE_SIZE;
  return Math.min(size, MAX_PAGE_SIZE);
}

export function encodeCursor(cursor: Cursor): string {
  const text = JSON.stringify([cursor.page, cursor.dir === "after" ? "a" : "b", cursor.key[0], cursor.key[1]]);
  return btoa(text).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

export function decodeCursor(text: string): Cursor | null {
  try {
    const value: unknown = JSON.parse(atob(text.replace(/-/g, "+").replace(/_/g, "/")));
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
  const link = (cursor: Cursor | null): string => {
    const target = new URL(url);
    target.searchParams.delete("page");
    target.searchParams.delete("cursor");
    if (cursor) target.searchParams.set("cursor", encodeCursor(cursor));
    return target.toString();
  };
  const next = hasNext && edges ? link({ page: page + 1, dir: "after", key: edges.last }) : null;
  let previous: string | null = null;
  if (hasPrevious) {
    previous = page - 1 <= 1 || !edges ? link(null) : link({ page: page - 1, dir: "before", key: edges.first });
  }
  return { next, previous };
}
