/**
 * How many rows a page of each list may hold, from the bytes of its largest row: a page is read
 * whole into the isolate (D1's result, the rows, the answer), so its rows stay within
 * LIST_PAGE_BYTES, well inside D1's 50 MB result and an isolate's 128 MB shared by its requests.
 * As Django REST framework sets `page_size` and `max_page_size` per view, each list has its
 * maximum, and its default is 100 or that maximum when lower. Each largest row is what the API
 * accepts at its longest (test/list-bounds.test.ts builds them and checks each figure).
 */
/** The bytes of one page's rows, read with the one row past it that says whether a next page exists. */
export const LIST_PAGE_BYTES = 16_000_000;

/** The largest row of each list as its answer shows it (JSON, UTF-8), rounded up. */
export const LARGEST_ROW_BYTES = {
  accounts: 2_000,
  counterparties: 3_500,
  invoices: 2_000,
  /** 100 invoices and 100 events, every text at its longest. */
  payments: 820_000,
  subscriptions: 80_000,
  /** A full-detail body of the largest payment with its attempts. */
  deliveries: 1_050_000,
  /** The same body with the headers it would be sent with. */
  feed: 1_050_000,
  /** A replay limited to 50 payments of the longest ids. */
  replays: 4_000,
} as const;

export type ListName = keyof typeof LARGEST_ROW_BYTES;

export const DEFAULT_PAGE_SIZE = 100;
export const MAX_PAGE_SIZE = 1000;

export interface PageBounds {
  max: number;
  default: number;
}

/** A list's maximum and default page size: as many rows as fit LIST_PAGE_BYTES with the one read past them, at most MAX_PAGE_SIZE. Pure. */
export function pageBounds(list: ListName): PageBounds {
  const max = Math.max(1, Math.min(MAX_PAGE_SIZE, Math.floor(LIST_PAGE_BYTES / LARGEST_ROW_BYTES[list]) - 1));
  return { max, default: Math.min(DEFAULT_PAGE_SIZE, max) };
}
