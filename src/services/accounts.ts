import { and, eq, isNull } from "drizzle-orm";
import { createDb, type Db } from "../db/client";
import { accounts, tenants } from "../db/schema";
import { requireShard } from "../db/shards";
import type { Env } from "../env";
import { placeAccount } from "./shards";
import { notFound } from "../errors";
import { newId } from "../lib/ids";
import type { PageRequest } from "../lib/pagination";
import { countWhere, listTable } from "../db/list-page";

export type Account = typeof accounts.$inferSelect;

/**
 * Makes an account on the shard named, or on the open shard with the fewest bytes. Its row in the
 * shard comes first: until the directory's row exists nothing can reach it, so a creation cut
 * short leaves no account that points at a shard without it.
 */
export async function createAccount(directory: Db, env: Env, name: string, shard?: string): Promise<Account> {
  const account: Account = {
    id: newId("acct"),
    name,
    createdAt: Date.now(),
    erasedAt: null,
    shard: await placeAccount(directory, env, shard),
    ...{ moveTo: null, moveState: null, moveStartedAt: null, moveCopiedRows: null, moveProgress: null, moveLeaseUntil: null },
    verifyEndpoints: false,
  };
  await createDb(requireShard(env, account.shard)).insert(tenants).values({ id: account.id, createdAt: account.createdAt });
  await directory.insert(accounts).values(account);
  return account;
}

export async function getAccount(db: Db, id: string): Promise<Account> {
  // An account being erased is gone for every caller at once.
  const account = await db
    .select()
    .from(accounts)
    .where(and(eq(accounts.id, id), isNull(accounts.erasedAt)))
    .get();
  if (!account) throw notFound();
  return account;
}

/** Changes an account's settings (PATCH /admin/accounts/{id}/); answers it as it is then. */
export async function updateAccount(db: Db, id: string, changes: { verifyEndpoints?: boolean }): Promise<Account> {
  if (changes.verifyEndpoints !== undefined) {
    const changed = await db
      .update(accounts)
      .set({ verifyEndpoints: changes.verifyEndpoints })
      .where(and(eq(accounts.id, id), isNull(accounts.erasedAt)))
      .returning({ id: accounts.id });
    if (changed.length === 0) throw notFound();
  }
  return getAccount(db, id);
}

/** Operators see every account: this list is the admin API's, not a tenant's. */
export function listAccounts(db: Db, request: PageRequest) {
  const everyAccount = isNull(accounts.erasedAt);
  return listTable(
    db,
    accounts,
    {
      where: everyAccount,
      sort: accounts.createdAt,
      id: accounts.id,
      count: countWhere(db, accounts, everyAccount),
    },
    request,
  );
}
