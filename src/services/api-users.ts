import { countFailure, failureKey, readFailures, throttledFor } from "./auth-throttle";
import { and, eq } from "drizzle-orm";
import { runNamedBatch, type Db } from "../db/client";
import { accounts, apiUsers, type Role } from "../db/schema";
import type { Caller } from "../context";
import { invalidField, notFound } from "../errors";
import { constantTimeEqual, newSecret, sha256Hex } from "../lib/crypto";
import { getAccount } from "./accounts";

export type ApiUser = typeof apiUsers.$inferSelect;

/** Makes a user with a generated password; the clear password is returned here only. */
export async function createApiUser(db: Db, accountId: string, username: string, role: Role) {
  await getAccount(db, accountId);
  const password = newSecret();
  const user = { username, accountId, role, passwordHash: await sha256Hex(password), createdAt: Date.now() };
  const inserted = await db.insert(apiUsers).values(user).onConflictDoNothing().returning({ username: apiUsers.username });
  if (inserted.length === 0) throw invalidField("username", "A user with that username already exists.");
  return { user, password };
}

export async function rotateApiUserPassword(db: Db, accountId: string, username: string) {
  const password = newSecret();
  const updated = await db
    .update(apiUsers)
    .set({ passwordHash: await sha256Hex(password) })
    .where(and(eq(apiUsers.accountId, accountId), eq(apiUsers.username, username)))
    .returning();
  const user = updated[0];
  if (!user) throw notFound();
  return { user, password };
}

export async function deleteApiUser(db: Db, accountId: string, username: string): Promise<void> {
  const deleted = await db
    .delete(apiUsers)
    .where(and(eq(apiUsers.accountId, accountId), eq(apiUsers.username, username)))
    .returning({ username: apiUsers.username });
  if (deleted.length === 0) throw notFound();
}

// Compared against when the username is unknown, so both paths hash and compare.
const NO_USER_HASH = "0".repeat(64);

/** Reads the API user with this username and its account's shard (a name over 150 characters matches none). */
export function selectUser(db: Db, username: string) {
  return db
    .select({
      username: apiUsers.username,
      accountId: apiUsers.accountId,
      role: apiUsers.role,
      passwordHash: apiUsers.passwordHash,
      shard: accounts.shard,
      verifyEndpoints: accounts.verifyEndpoints,
    })
    .from(apiUsers)
    .innerJoin(accounts, eq(accounts.id, apiUsers.accountId))
    .where(eq(apiUsers.username, username.length <= 150 ? username : ""));
}

export type Authentication = { caller: Caller } | { caller: null; throttledFor: number | null };

/**
 * Checks Basic credentials in the directory and finds the account's shard, in one round trip with
 * the failure counts of the username and the client's address (services/auth-throttle.ts): a
 * caller over the limit is refused before any password is compared; a wrong password counts a
 * failure. An unknown user and a wrong password answer alike.
 */
export async function authenticate(db: Db, username: string, password: string, address: string | null, now = Date.now()): Promise<Authentication> {
  const keys = [failureKey("user", username.slice(0, 150)), ...(address ? [failureKey("address", address)] : [])];
  const { users, failures } = await runNamedBatch(db, {
    users: selectUser(db, username),
    failures: readFailures(db, keys),
  });
  const throttled = throttledFor(failures.flat(), now);
  if (throttled !== null) return { caller: null, throttledFor: throttled };
  const user = users[0];
  const hash = await sha256Hex(password);
  const matches = constantTimeEqual(hash, user?.passwordHash ?? NO_USER_HASH);
  if (!user || !matches) {
    await countFailure(db, keys, now);
    return { caller: null, throttledFor: null };
  }
  return {
    caller: {
      username: user.username,
      accountId: user.accountId,
      role: user.role,
      shard: user.shard,
      passwordHash: user.passwordHash,
      verifyEndpoints: user.verifyEndpoints,
    },
  };
}
