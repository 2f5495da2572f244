/**
 * Subscription filters (docs/interface.md, "Filters"): which changes make a delivery for a
 * subscription, decided on the payment as the change leaves it. Each list is OR within (the
 * payment's value is one of them), the keys AND across; `amount_cents__gte` and `__lte` bound the
 * amount. No filters: every change. The rule is written twice, once here for the API
 * (filters/test), once as SQL that decides in the write's own batch; a table test runs both on the
 * same cases.
 */
import { sql, type SQL } from "drizzle-orm";

export const FILTER_LISTS = ["status", "originating_counterparty_id", "receiving_counterparty_id", "payment_method"] as const;
export type FilterList = (typeof FILTER_LISTS)[number];

export type Filters = Partial<Record<FilterList, string[]>> & { amount_cents__gte?: number; amount_cents__lte?: number };

/** What of a payment its filters look at. */
export interface FilteredPayment {
  status: string;
  originating_counterparty_id: string;
  receiving_counterparty_id: string;
  payment_method: string;
  amount_cents: number;
}

/** Whether the payment passes the filters (null: no filters). Pure. */
export function matches(filters: Filters | null, payment: FilteredPayment): boolean {
  if (filters === null) return true;
  for (const key of FILTER_LISTS) {
    const allowed = filters[key];
    if (allowed !== undefined && !allowed.includes(payment[key])) return false;
  }
  if (filters.amount_cents__gte !== undefined && payment.amount_cents < filters.amount_cents__gte) return false;
  if (filters.amount_cents__lte !== undefined && payment.amount_cents > filters.amount_cents__lte) return false;
  return true;
}

/** The filters as stored: JSON text, or null for none. */
export function storedFilters(filters: Filters | null | undefined): string | null {
  return filters === null || filters === undefined || Object.keys(filters).length === 0 ? null : JSON.stringify(filters);
}

export function parseFilters(text: string | null): Filters | null {
  return text === null ? null : (JSON.parse(text) as Filters);
}

/** A payment's filtered fields as SQL expressions (bound values, or columns of the statement's rows). */
export type FilteredPaymentSql = Record<keyof FilteredPayment, SQL>;

/**
 * `matches` as SQL: whether the filters in `column` (JSON text or null) pass the payment. The
 * JSON paths are this module's own constants, written into the statement.
 */
export function matchesSql(column: SQL, payment: FilteredPaymentSql): SQL {
  const path = (key: string) => sql.raw(`'$.${key}'`);
  const lists = FILTER_LISTS.map(
    (key) => sql`(json_type(${column}, ${path(key)}) is null or exists (select 1 from json_each(${column}, ${path(key)}) where value = ${payment[key]}))`,
  );
  const bound = (key: "amount_cents__gte" | "amount_cents__lte", op: string) =>
    sql`(json_extract(${column}, ${path(key)}) is null or ${payment.amount_cents} ${sql.raw(op)} json_extract(${column}, ${path(key)}))`;
  return sql`(${column} is null or (${sql.join([...lists, bound("amount_cents__gte", ">="), bound("amount_cents__lte", "<=")], sql` and `)}))`;
}
