import { sql } from "drizzle-orm";

/**
 * A LIMIT written into the statement's text instead of bound as a parameter.
 *
 * SQLite (3.47 on) reads a bound LIMIT's value while planning, so each new binding of `limit ?`
 * expires the prepared statement and the next step compiles it again. D1 keeps statements
 * prepared between calls; with a bound LIMIT every call paid the compile, and for the `page=N`
 * seek (a recursive walk of a few dozen lines) that was a tenth of the local runtime's CPU. A
 * literal keeps the statement prepared: its text changes only with `n`, which is always a number
 * the code chose (a page size, a batch size), never text from a request.
 *
 * Drizzle types `.limit()` as a number or a placeholder, and writes any SQL given there as it is.
 */
export function fixedLimit(n: number): number {
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`A LIMIT must be a whole number, not ${n}.`);
  return sql.raw(String(n)) as unknown as number;
}
