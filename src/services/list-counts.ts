import { and, eq, sql, type SQL } from "drizzle-orm";
import type { Db } from "../db/client";
import { guardedInsert } from "../db/guarded-insert";
import { listCounts } from "../db/schema";

type Resource = (typeof listCounts.$inferSelect)["resource"];

/** The statement that adds one to an account's row count, for the insert's own batch. */
export function countOne(db: Db, accountId: string, resource: Resource) {
  return db
    .insert(listCounts)
    .values({ accountId, resource, n: 1 })
    .onConflictDoUpdate({ target: [listCounts.accountId, listCounts.resource], set: { n: sql`${listCounts.n} + 1` } });
}

/** Same, but only when `guard` holds inside the batch. */
export function countOneIf(db: Db, accountId: string, resource: Resource, guard: SQL) {
  return guardedInsert(db, listCounts, { accountId, resource, n: 1 }, guard).onConflictDoUpdate({
    target: [listCounts.accountId, listCounts.resource],
    set: { n: sql`${listCounts.n} + 1` },
  });
}

export async function storedCount(db: Db, accountId: string, resource: Resource): Promise<number> {
  const row = await db
    .select({ n: listCounts.n })
    .from(listCounts)
    .where(and(eq(listCounts.accountId, accountId), eq(listCounts.resource, resource)))
    .get();
  return row?.n ?? 0;
}
