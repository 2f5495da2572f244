/**
 * Wrong passwords and admin tokens are throttled, with the state in D1 so that the rule holds
 * across every isolate: once a key has failed LIMITS[kind] times within its one-minute window, its
 * requests answer 429 for the rest of that window, before any credential is checked (so a guess
 * made then cannot be told right from wrong). Keys: the username tried, the client's address
 * (`cf-connecting-ip`, when there is one), and the admin API as a whole per address.
 */
import { eq, lt, sql } from "drizzle-orm";
import { runBatch, type Db } from "../db/client";
import { authFailures } from "../db/schema";
import { fixedLimit } from "../db/fixed-limit";

export const FAILURE_WINDOW_MS = 60_000;
export const LIMITS = { user: 20, address: 50, admin: 20 } as const;
type Kind = keyof typeof LIMITS;

export interface FailureRow {
  key: string;
  windowStart: number;
  failures: number;
}

export const failureKey = (kind: Kind, value: string) => `${kind}:${value}`;
const kindOf = (key: string) => key.slice(0, key.indexOf(":")) as Kind;

/** Seconds until the first of `rows` that is over its limit lets requests in again; null when none is. Pure. */
export function throttledFor(rows: readonly FailureRow[], now: number): number | null {
  let until: number | null = null;
  for (const row of rows) {
    const ends = row.windowStart + FAILURE_WINDOW_MS;
    if (ends > now && row.failures >= LIMITS[kindOf(row.key)]) until = Math.max(until ?? 0, ends);
  }
  return until === null ? null : Math.max(1, Math.ceil((until - now) / 1000));
}

/**
 * The statements that read the keys' failure counts, one `key = ?` each, for the credential
 * check's batch: a primary-key lookup that misses reads no row, where D1 counts every value of an
 * IN list (or OR) as a row read even when none matches.
 */
export function readFailures(db: Db, keys: string[]) {
  return keys.map((key) => db.select().from(authFailures).where(eq(authFailures.key, key)));
}

/** Counts one failure for each key: a window that has ended starts again at `now`. */
export function countFailure(db: Db, keys: string[], now: number): Promise<unknown> {
  const ended = sql`${authFailures.windowStart} <= ${now - FAILURE_WINDOW_MS}`;
  const statements = keys.map((key) =>
    db
      .insert(authFailures)
      .values({ key, windowStart: now, failures: 1 })
      .onConflictDoUpdate({
        target: authFailures.key,
        set: {
          failures: sql`case when ${ended} then 1 else ${authFailures.failures} + 1 end`,
          windowStart: sql`case when ${ended} then ${now} else ${authFailures.windowStart} end`,
        },
      }),
  );
  return runBatch(db, statements);
}

/** The cron's clean-up: windows that ended, `limit` a run. */
export async function forgetAuthFailures(db: Db, now: number, limit = 5000): Promise<void> {
  await db.run(
    sql`delete from ${authFailures} where rowid in (select rowid from ${authFailures} where ${lt(authFailures.windowStart, now - FAILURE_WINDOW_MS)} limit ${fixedLimit(limit)})`,
  );
}
