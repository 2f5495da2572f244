/**
 * Timestamps are stored as integer milliseconds since the epoch and shown as ISO 8601 UTC with
 * milliseconds. Filter values may carry more precision than is stored, so a parsed filter keeps
 * whether it had a remainder below the millisecond; the comparisons below stay exact.
 */
export interface Instant {
  /** Whole milliseconds, rounded down. */
  ms: number;
  /** True when the value had non-zero digits below the millisecond. */
  subMs: boolean;
}

// Django's parse_datetime: one or two digits for month, day, hour, minute and second, and white
// space allowed before the zone.
const PATTERN = /^(\d{4})-(\d{1,2})-(\d{1,2})(?:[T ](\d{1,2}):(\d{1,2})(?::(\d{1,2})(?:[.,](\d+))?)?\s*(Z|z|[+\- ]\d{2}(?::?\d{2})?)?)?$/;

export function toIso(ms: number): string {
  return new Date(ms).toISOString();
}

/**
 * Parses ISO 8601 with or without a zone (none means UTC), with any number of fractional digits,
 * or a bare date (midnight UTC). Returns null for anything else, including impossible dates.
 * A space before an offset is read as `+`, since an unescaped `+` in a query string arrives as one.
 */
export function parseInstant(text: string): Instant | null {
  const m = PATTERN.exec(text.trim());
  if (!m) return null;
  const [, y, mo, d, h = "0", mi = "0", s = "0", frac = "", zone = "Z"] = m;
  const year = Number(y),
    month = Number(mo),
    day = Number(d);
  const hour = Number(h),
    minute = Number(mi),
    second = Number(s);
  // Year 0 does not exist in Python's calendar (Django answers 400), nor here.
  if (year < 1 || month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return null;
  // Date.UTC reads years 0-99 as 1900-1999; setUTCFullYear takes the year as written.
  const check = new Date(Date.UTC(2000, 0, 1, hour, minute, second));
  check.setUTCFullYear(year, month - 1, day);
  if (check.getUTCDate() !== day || check.getUTCMonth() !== month - 1) return null;
  const base = check.getTime();
  const offset = parseOffset(zone);
  if (offset === null) return null;
  const ms = base + Number((frac + "000").slice(0, 3)) - offset;
  const subMs = /[1-9]/.test(frac.slice(3));
  if (!Number.isFinite(ms) || Math.abs(ms) > 8.64e15) return null;
  return { ms, subMs };
}

function parseOffset(zone: string): number | null {
  if (zone === "Z" || zone === "z") return 0;
  const sign = zone[0] === "-" ? -1 : 1;
  const digits = zone.slice(1).replace(":", "");
  const hours = Number(digits.slice(0, 2));
  const minutes = digits.length > 2 ? Number(digits.slice(2, 4)) : 0;
  if (hours > 23 || minutes > 59) return null;
  return sign * (hours * 60 + minutes) * 60_000;
}

export type Comparison = "gt" | "gte" | "lt" | "lte";

/**
 * Turns `stored <op> instant` into an equivalent comparison on whole milliseconds, exact even
 * when the instant has digits below the millisecond: with x = 30.1234 ms, `>= x` is `>= 31` on
 * whole ms, `> x` is `> 30`, `< x` is `< 31`, `<= x` is `<= 30`.
 */
export function wholeMsBound(op: Comparison, instant: Instant): number {
  const ceil = instant.ms + (instant.subMs ? 1 : 0);
  switch (op) {
    case "gt":
    case "lte":
      return instant.ms;
    case "gte":
    case "lt":
      return ceil;
  }
}
