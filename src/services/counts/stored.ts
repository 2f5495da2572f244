import { and, eq, sql, type SQL } from "drizzle-orm";
import type { Db } from "../../db/client";
import { guardedInsert } from "../../db/guarded-insert";
import { listCounts, tenants, PAYMENT_STATUSES, statusColumn, type PaymentStatus, type StatusColumn } from "../../db/schema";

/**
 * Stored counts, one row of `list_counts` each (rules: ./index.ts):
 * - `payments`, `invoices`, `counterparties`: every row of the account;
 * - `<resource>/<field>=<value>`: the rows with that value of a filter that the counts cover
 *   (`COUNTED_FILTERS`): a payment's status and its two counterparties, a counterparty's type.
 *   A payment status's count is stored as a column of the `payments` row (`storedAt`).
 */
export type CountKey = string;

export const COUNTED_FILTERS = {
  payments: ["status", "originating_counterparty_id", "receiving_counterparty_id"],
  counterparties: ["type"],
  invoices: [],
} as const;
export type Resource = keyof typeof COUNTED_FILTERS;

export function countKey(resource: Resource, field?: string, value?: string): CountKey {
  return field === undefined ? resource : `${resource}/${field}=${value}`;
}

/** The filters a list request gives (`ordering` is no filter). */
export function givenFilters(filters: object): [string, unknown][] {
  return Object.entries(filters).filter(([name, value]) => value !== undefined && name !== "ordering");
}

/**
 * The stored count that answers a list's `count`, or null when its filters need counting: a list
 * with no filter, or with exactly one counted filter holding exactly one value. Pure.
 */
export function storedCountKey(resource: Resource, filters: object): CountKey | null {
  const given = givenFilters(filters);
  if (given.length === 0) return countKey(resource);
  if (given.length !== 1) return null;
  const [field, value] = given[0]!;
  const counted = (COUNTED_FILTERS[resource] as readonly string[]).includes(field);
  return counted && Array.isArray(value) && value.length === 1 ? countKey(resource, field, String(value[0])) : null;
}

/** The resource, filter and value a key counts (countKey's parts). Pure. */
export function keyParts(key: CountKey): { resource: string; field?: string; value?: string } {
  const match = /^([^/]+)\/([^=]+)=(.*)$/.exec(key);
  return match ? { resource: match[1]!, field: match[2]!, value: match[3]! } : { resource: key };
}

/** Where a count is stored: its row, and the column of it. Pure. */
export function storedAt(key: CountKey): { resource: string; column: "n" | StatusColumn } {
  const { resource, field, value } = keyParts(key);
  return resource === "payments" && field === "status" && (PAYMENT_STATUSES as readonly string[]).includes(value!)
    ? { resource: "payments", column: statusColumn(value as PaymentStatus) }
    : { resource: key, column: "n" };
}

/** The statement that adds one to a count, for the insert's own batch; only where `when` holds then, when given. */
export function countOne(db: Db, accountId: string, key: CountKey, when?: SQL) {
  const insert = when
    ? guardedInsert(db, listCounts, { accountId, resource: key, n: 1 }, when)
    : db.insert(listCounts).values({ accountId, resource: key, n: 1 });
  return insert.onConflictDoUpdate({ target: [listCounts.accountId, listCounts.resource], set: { n: sql`${listCounts.n} + 1` } });
}

/**
 * The query that reads a stored count, for a list to read in the same round trip as its rows;
 * with `plus`, what is not stored yet added to it (./payments.ts), read off the
 * account's own row since the count's may not exist yet.
 */
export function storedCountQuery(db: Db, accountId: string, key: CountKey, plus?: SQL) {
  const { resource, column } = storedAt(key);
  if (plus) {
    const stored = sql`(select ${sql.identifier(column)} from list_counts where account_id = ${accountId} and resource = ${resource})`;
    return db
      .select({ n: sql<number>`coalesce(${stored}, 0) + ${plus}`.mapWith(Number) })
      .from(tenants)
      .where(eq(tenants.id, accountId));
  }
  return db
    .select({ n: sql<number>`${sql.identifier(column)}`.mapWith(Number) })
    .from(listCounts)
    .where(and(eq(listCounts.accountId, accountId), eq(listCounts.resource, resource)));
}
