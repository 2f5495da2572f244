import { and, eq, isNull } from "drizzle-orm";
import type { Db } from "../db/client";
import { accounts } from "../db/schema";
import { notFound } from "../errors";
import { newId } from "../lib/ids";
import type { PageRequest } from "../lib/pagination";
import { countWhere, listTable } from "../db/list-page";

export type Account = typeof accounts.$inferSelect;

export async function createAccount(db: Db, name: string): Promise<Account> {
  const account = { id: newId("acct"), name, createdAt: Date.now(), erasedAt: null };
  await db.insert(accounts).values(account);
  return account;
}

export async function getAccount(db: Db, id: string): Promise<Account> {
  // An account being erased is gone for every caller at once.
  const account = await db.select().from(accounts).where(and(eq(accounts.id, id), isNull(accounts.erasedAt))).get();
  if (!account) throw notFound();
  return account;
}

/** Operators see every account: this list is the admin API's, not a tenant's. */
export function listAccounts(db: Db, request: PageRequest) {
  const everyAccount = isNull(accounts.erasedAt);
  return listTable(db, accounts, {
    where: everyAccount,
    sort: accounts.createdAt,
    id: accounts.id,
    count: countWhere(db, accounts, everyAccount),
  }, request);
}
