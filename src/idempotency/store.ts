/**
 * Idempotency keys in D1.
 *
 * A request claims its key with `claimStatements`: an expired key is forgotten, a crashed run of
 * the same request (its lock lapsed) is taken over, and a new key is inserted with the request's
 * token; the row read back says what the request does (decision.ts). A write's claim travels in
 * its own batch (keyed.ts), in front of its statements, which apply only where the key is the
 * request's and unanswered (`ownsSql`); the batch stores the answer with the key
 * (`answerStatement`) under the same guard as the write, so the key and the write commit together
 * or not at all. Answers that no write's batch stored (a 4xx) are stored after, by `settle`.
 */
import { and, eq, isNull, lt, sql, SQL } from "drizzle-orm";
import { runNamedBatch, type BatchStatement, type Db } from "../db/client";
import { notHeldByMove } from "../db/moving";
import { fixedLimit } from "../db/fixed-limit";
import { idempotencyKeys } from "../db/schema";
import { KEY_TTL_MS, LOCK_MS, storable, type KeyRow } from "./decision";

/** A request's key: whose, which, the request's token for it, and the hash of the request it came with. */
export interface RequestKey {
  accountId: string;
  username: string;
  key: string;
  token: string;
  requestHash: string;
}

export type StoredKey = KeyRow & { body: string | null; sealed: number };

const ofKey = (key: Pick<RequestKey, "accountId" | "username" | "key">) =>
  and(eq(idempotencyKeys.accountId, key.accountId), eq(idempotencyKeys.username, key.username), eq(idempotencyKeys.key, key.key));

/** The statement that reads the key's row, as the claim left it (its result, read by `storedKey`). */
export function keyRowStatement(db: Db, key: RequestKey) {
  return db
    .select({
      requestHash: idempotencyKeys.requestHash,
      token: idempotencyKeys.token,
      status: idempotencyKeys.status,
      body: idempotencyKeys.body,
      sealed: idempotencyKeys.sealed,
    })
    .from(idempotencyKeys)
    .where(ofKey(key));
}

/** The statements that claim the request's key, the last reading the key's row after. */
export function claimStatements(db: Db, key: RequestKey, now: number) {
  return [...takeStatements(db, key, now), keyRowStatement(db, key)] as const;
}

/** The claim's writes: an expired key forgotten, a crashed run of the same request taken over, a new key inserted. */
function takeStatements(db: Db, key: RequestKey, now: number) {
  const lockedUntil = now + LOCK_MS;
  return [
    db.delete(idempotencyKeys).where(and(ofKey(key), lt(idempotencyKeys.createdAt, now - KEY_TTL_MS))),
    db
      .update(idempotencyKeys)
      .set({ token: key.token, lockedUntil })
      .where(and(ofKey(key), isNull(idempotencyKeys.status), lt(idempotencyKeys.lockedUntil, now), eq(idempotencyKeys.requestHash, key.requestHash))),
    db
      .insert(idempotencyKeys)
      .values({ accountId: key.accountId, username: key.username, key: key.key, requestHash: key.requestHash, token: key.token, lockedUntil, createdAt: now })
      .onConflictDoNothing(),
  ] as const;
}

/** The key's row from the rows its read returned; undefined when there is none. */
export function storedKey(rows: readonly StoredKey[]): StoredKey | undefined {
  return rows[0] as StoredKey | undefined;
}

/** Whether the key is the request's and unanswered, as SQL: a keyed write's statements require it. */
export function ownsSql(key: RequestKey): SQL {
  return sql`exists (select 1 from ${idempotencyKeys} where ${ofKey(key)} and ${idempotencyKeys.token} = ${key.token} and ${idempotencyKeys.status} is null)`;
}

/**
 * The statement that stores a write's answer with its key, for the write's own batch: `body` is
 * the answer's JSON (or SQL that makes it from what the batch wrote), applied only where `guard`
 * holds and the key is still the request's.
 */
export function answerStatement(db: Db, key: RequestKey, status: number, body: string | SQL, sealed: boolean, guard?: SQL): BatchStatement {
  return db
    .update(idempotencyKeys)
    .set({ status, body, sealed: sealed ? 1 : 0 })
    .where(and(ofKey(key), eq(idempotencyKeys.token, key.token), isNull(idempotencyKeys.status), guard));
}

/**
 * After a request whose answer no write's batch stored: claims the key (a request that answered
 * before claiming it, as a 400 on its body does), then stores the answer with it, or lets the key
 * go when the answer is not kept (a 5xx, 409 or 429) so that the client may retry with it. Neither
 * touches a key whose answer is stored, nor one another request holds. Returns the key's row after.
 */
export async function settle(db: Db, key: RequestKey, status: number, body: string, now = Date.now()): Promise<StoredKey | undefined> {
  const mine = and(ofKey(key), eq(idempotencyKeys.token, key.token), isNull(idempotencyKeys.status));
  const { row } = await runNamedBatch(db, {
    take: [...takeStatements(db, key, now)],
    answer: storable(status) ? db.update(idempotencyKeys).set({ status, body }).where(mine) : db.delete(idempotencyKeys).where(mine),
    row: keyRowStatement(db, key),
  });
  return storedKey(row);
}

/** Forgets up to `limit` keys older than a day, oldest first (the cron trigger); returns how many. */
export async function forgetExpiredKeys(db: Db, now: number, limit = 5000): Promise<number> {
  const result = await db.run(
    sql`delete from ${idempotencyKeys} where rowid in (select rowid from ${idempotencyKeys} where ${idempotencyKeys.createdAt} < ${now - KEY_TTL_MS} and ${notHeldByMove(idempotencyKeys.accountId)} order by ${idempotencyKeys.createdAt} limit ${fixedLimit(limit)})`,
  );
  return result.meta.changes ?? 0;
}
