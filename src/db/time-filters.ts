import { gt, gte, lt, lte, type Column, type SQL } from "drizzle-orm";
import { wholeMsBound, type Comparison, type Instant } from "../lib/time";

export type TimeFilters<Prefix extends string> = Partial<Record<`${Prefix}__${Comparison}`, Instant>>;

const OPERATORS = { gt, gte, lt, lte } as const;

/** `created__gte=…` and friends as exact conditions on an integer-ms column. */
export function timeConditions(column: Column, prefix: string, filters: Record<string, Instant | undefined>): SQL[] {
  const out: SQL[] = [];
  for (const op of ["gt", "gte", "lt", "lte"] as const) {
    const instant = filters[`${prefix}__${op}`];
    if (instant) out.push(OPERATORS[op](column, wholeMsBound(op, instant)));
  }
  return out;
}
