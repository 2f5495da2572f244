/**
 * Idempotency keys in D1.
 *
 * A request claims its key in one batch: an expired key is forgotten, a crashed run of the same
 * request (its lock lapsed) is taken over, and a new key is inserted with the request's token;
 * the row read back says what the request does (decision.ts). The claim's statements travel in
 * front of the write's first read, in the same round trip (db/leading-d1.ts).
 *
 * A write's answer is stored by `answerStatement`, a statement of the write's own batch, so the
 * key and the write commit together or not at all. The statement keeps the key's token only if it
 * is still this request's: when a lapsed lock let another request take the key over, it sets the
 * token to null, the NOT NULL constraint fails, and the whole batch (the write with it) is rolled
 * back. Answers of requests that wrote nothing (a 400, a 404) are stored after, by `settle`.
 */
import { and, eq, isNull, lt, sql, SQL } from "drizzle-orm";
import type { BatchStatement, Db } from "../db/client";
import { notHeldByMove } from "../db/moving";
import { fixedLimit } from "../db/fixed-limit";
import { idempotencyKeys } from "../db/schema";
import { KEY_TTL_MS, LOCK_MS, storable, type KeyRow } from "./decision";

/** A request's hold on its key. */
export interface Claim {
  accountId: string;
  username: string;
  key: string;
  token: string;
  /** Set once a write's batch carried the answer (answerStatement). */
  answeredInBatch: boolean;
}

export type StoredKey = KeyRow & { body: string | null; sealed: number };

const ofKey = (claim: Pick<Claim, "accountId" | "username" | "key">) =>
  and(eq(idempotencyKeys.accountId, claim.accountId), eq(idempotencyKeys.username, claim.username), eq(idempotencyKeys.key, claim.key));

/**
 * The statements that claim `claim.key` for a request whose method, path and body hash to
 * `requestHash`, the last reading the key's row after (`storedKey` reads its result).
 */
export function claimStatements(db: Db, claim: Claim, requestHash: string, now: number) {
  const lockedUntil = now + LOCK_MS;
  return [
    db.delete(idempotencyKeys).where(and(ofKey(claim), lt(idempotencyKeys.createdAt, now - KEY_TTL_MS))),
    db
      .update(idempotencyKeys)
      .set({ token: claim.token, lockedUntil })
      .where(and(ofKey(claim), isNull(idempotencyKeys.status), lt(idempotencyKeys.lockedUntil, now), eq(idempotencyKeys.requestHash, requestHash))),
    db
      .insert(idempotencyKeys)
      .values({ accountId: claim.accountId, username: claim.username, key: claim.key, requestHash, token: claim.token, lockedUntil, createdAt: now })
      .onConflictDoNothing(),
    db
      .select({ requestHash: idempotencyKeys.requestHash, token: idempotencyKeys.token, status: idempotencyKeys.status, body: idempotencyKeys.body, sealed: idempotencyKeys.sealed })
      .from(idempotencyKeys)
      .where(ofKey(claim)),
  ] as const;
}

/** The key's row from the claim's last statement, as D1 answers it (columns in the select's order). */
export function storedKey(result: D1Result): StoredKey {
  const [requestHash, token, status, body, sealed] = Object.values(result.results[0] as Record<string, unknown>);
  return { requestHash, token, status, body, sealed } as StoredKey;
}

/**
 * The statement that stores a write's answer with its key, for the write's own batch: `body` is
 * the answer's JSON (or SQL that makes it from what the batch wrote), applied only where `guard`
 * holds. It fails the batch if the key is no longer this request's.
 */
export function answerStatement(db: Db, claim: Claim, status: number, body: string | SQL, sealed: boolean, guard?: SQL): BatchStatement {
  claim.answeredInBatch = true;
  return db
    .update(idempotencyKeys)
    .set({ status, body, sealed: sealed ? 1 : 0, token: sql`case when ${idempotencyKeys.token} = ${claim.token} then ${idempotencyKeys.token} end` })
    .where(and(ofKey(claim), guard));
}

/**
 * The statement that fails its batch (the NOT NULL of the token) unless `claim.key` is this
 * request's and unanswered: in front of a write's statements, right after the claim's.
 */
export function ownStatement(db: Db, claim: Claim) {
  return db
    .update(idempotencyKeys)
    .set({ token: sql`case when ${idempotencyKeys.token} = ${claim.token} and ${idempotencyKeys.status} is null then ${idempotencyKeys.token} end` })
    .where(ofKey(claim));
}

/** Whether a batch failed because its answer (or own) statement found the key not this request's. */
export function isKeyLost(error: unknown): boolean {
  return /NOT NULL constraint failed: idempotency_keys\.token/.test(String((error as Error)?.message ?? error));
}

/**
 * After the request: stores an answer that no write's batch stored (a 4xx), or lets the key go
 * when the answer is not kept (a 5xx, 409 or 429), so that the client may retry with it. Neither
 * touches a key whose answer is stored, nor one another request has taken over.
 */
export async function settle(db: Db, claim: Claim, status: number, body: string): Promise<void> {
  if (storable(status) && status < 300 && claim.answeredInBatch) return;
  const mine = and(ofKey(claim), eq(idempotencyKeys.token, claim.token), isNull(idempotencyKeys.status));
  if (storable(status)) await db.update(idempotencyKeys).set({ status, body }).where(mine);
  else await db.delete(idempotencyKeys).where(mine);
}

/** Forgets up to `limit` keys older than a day, oldest first (the cron trigger); returns how many. */
export async function forgetExpiredKeys(db: Db, now: number, limit = 5000): Promise<number> {
  const result = await db.run(
    sql`delete from ${idempotencyKeys} where rowid in (select rowid from ${idempotencyKeys} where ${idempotencyKeys.createdAt} < ${now - KEY_TTL_MS} and ${notHeldByMove(idempotencyKeys.accountId)} order by ${idempotencyKeys.createdAt} limit ${fixedLimit(limit)})`,
  );
  return result.meta.changes ?? 0;
}
