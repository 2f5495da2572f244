/**
 * Subscription filters (docs/interface.md, "Filters"): which changes make a delivery for a
 * subscription, decided on the payment as the change leaves it. Each list is OR within (the
 * payment's value is one of them), the keys AND across; `amount_cents__gte` and `__lte` bound the
 * amount. No filters: every change. Each rule is stated once (FILTER_RULES), in TypeScript for the
 * API (filters/test) beside the SQL that decides in the write's own batch; a table test runs both
 * on the same cases.
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

/** A payment's filtered fields as SQL expressions (bound values, or columns of the statement's rows). */
export type FilteredPaymentSql = Record<keyof FilteredPayment, SQL>;

/** One filter: whether a payment passes it (`holds`), and the same over the stored filters' JSON as SQL (`sql`). */
interface FilterRule {
  key: FilterList | "amount_cents__gte" | "amount_cents__lte";
  holds(filters: Filters, payment: FilteredPayment): boolean;
  sql(column: SQL, payment: FilteredPaymentSql): SQL;
}

/** The JSON path of a filter's key: this module's own constants, written into the statement. */
const path = (key: string) => sql.raw(`'$.${key}'`);

/** A bound on the amount: absent, or the amount on its side of it. */
const bound = (key: "amount_cents__gte" | "amount_cents__lte", op: ">=" | "<="): FilterRule => ({
  key,
  holds: (filters, payment) => filters[key] === undefined || (op === ">=" ? payment.amount_cents >= filters[key]! : payment.amount_cents <= filters[key]!),
  sql: (column, payment) =>
    sql`(json_extract(${column}, ${path(key)}) is null or ${payment.amount_cents} ${sql.raw(op)} json_extract(${column}, ${path(key)}))`,
});

export const FILTER_RULES: readonly FilterRule[] = [
  // A list: absent, or the payment's value is one of it.
  ...FILTER_LISTS.map((key): FilterRule => ({
    key,
    holds: (filters, payment) => filters[key] === undefined || filters[key]!.includes(payment[key]),
    sql: (column, payment) =>
      sql`(json_type(${column}, ${path(key)}) is null or exists (select 1 from json_each(${column}, ${path(key)}) where value = ${payment[key]}))`,
  })),
  bound("amount_cents__gte", ">="),
  bound("amount_cents__lte", "<="),
];

/** Whether the payment passes the filters (null: no filters): every rule holds. Pure. */
export function matches(filters: Filters | null, payment: FilteredPayment): boolean {
  return filters === null || FILTER_RULES.every((rule) => rule.holds(filters, payment));
}

/** `matches` as SQL: whether the filters in `column` (JSON text or null) pass the payment. */
export function matchesSql(column: SQL, payment: FilteredPaymentSql): SQL {
  return sql`(${column} is null or (${sql.join(
    FILTER_RULES.map((rule) => rule.sql(column, payment)),
    sql` and `,
  )}))`;
}

/** The filters as stored: JSON text, or null for none. */
export function storedFilters(filters: Filters | null | undefined): string | null {
  return filters === null || filters === undefined || Object.keys(filters).length === 0 ? null : JSON.stringify(filters);
}

export function parseFilters(text: string | null): Filters | null {
  return text === null ? null : (JSON.parse(text) as Filters);
}
