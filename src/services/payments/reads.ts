import type { JsonText } from "../../db/json-view";
import { LARGEST_ROW_BYTES } from "../../lib/list-bounds";
import { and, desc, eq } from "drizzle-orm";
import type { ServiceContext } from "../../context";
import { fixedLimit } from "../../db/fixed-limit";
import { payments, statusColumn, type PaymentStatus } from "../../db/schema";
import { notFound } from "../../errors";
import type { PageRequest } from "../../lib/pagination";
import type { Instant } from "../../lib/time";
import { countWhere, listConditions, listTable } from "../../db/list-page";
import { inAccount } from "../../db/scope";
import { addedAfterMark, changesAfterMark, countInRange, countKey, givenFilters, rangeOf, seekBy, storedCountKey, storedCountQuery, timeCountField, type Buckets } from "../counts";
import { timeConditions } from "../../db/time-filters";
import type { PaymentView } from "../../db/payment-detail";

/** The detail as the payment's last write stored it (write-fence.ts): one row read. */
export async function getPayment({ db, accountId }: ServiceContext, paymentId: string): Promise<PaymentView> {
  const [found] = await db.select({ detail: payments.detail }).from(payments).where(and(inAccount(payments, accountId), eq(payments.id, paymentId)));
  if (!found) throw notFound();
  return storedDetail(found);
}

/** A payment row's stored detail, which every payment write stores in its batch. */
export function storedDetail(row: { detail: string | null }): PaymentView {
  return JSON.parse(storedText(row)) as PaymentView;
}

/** A payment row's stored detail as its JSON text, as a list sends it. */
function storedText(row: { detail: string | null }): JsonText<PaymentView> {
  if (row.detail === null) throw new Error("a payment row without its stored detail");
  return row.detail;
}

/** The account's most recent payment (by created), as its detail; null when it has none. */
export async function latestPayment({ db, accountId }: ServiceContext): Promise<PaymentView | null> {
  const [row] = await db.select({ detail: payments.detail }).from(payments).where(inAccount(payments, accountId)).orderBy(desc(payments.createdAt), desc(payments.id)).limit(fixedLimit(1));
  return row ? storedDetail(row) : null;
}

export interface PaymentFilters {
  status?: PaymentStatus[];
  originating_counterparty_id?: string[];
  receiving_counterparty_id?: string[];
  ordering?: "created" | "updated";
  [time: string]: Instant | string[] | string | undefined;
}

export async function listPayments({ db, accountId }: ServiceContext, filters: PaymentFilters, request: PageRequest) {
  const times = filters as Record<string, Instant | undefined>;
  const { where, anyOf } = listConditions(
    [inAccount(payments, accountId), ...timeConditions(payments.createdAt, "created", times), ...timeConditions(payments.updatedAt, "updated", times)],
    [
      { column: payments.receivingCounterpartyId, values: filters.receiving_counterparty_id },
      { column: payments.originatingCounterpartyId, values: filters.originating_counterparty_id },
      { column: payments.status, values: filters.status },
    ],
  );
  const stored = storedCountKey("payments", filters);
  const sort = filters.ordering === "updated" ? payments.updatedAt : payments.createdAt;
  const sortField = filters.ordering === "updated" ? "updated" : "created";
  const field = timeCountField(filters, ["created", "updated"]);
  // One status, and at most bounds on created: that status's own created buckets count it.
  const status = statusWithCreated(filters);
  // page=N by the time buckets of the sort timestamp, when the only filters bound that timestamp
  // (or are one status, for a list by created).
  const seek =
    stored === countKey("payments") || field === sortField
      ? seekBy(db, paymentBuckets(accountId, sortField), rangeOf(sortField, times))
      : status && sortField === "created"
        ? seekBy(db, paymentBuckets(accountId, "created", status), rangeOf("created", times))
        : undefined;
  const page = await listTable(db, payments, {
    largestRowBytes: LARGEST_ROW_BYTES.payments,
    large: payments.detail,
    // The stored detail is the whole answer; the rest of the row is not read out.
    fields: ["detail"],
    where,
    anyOf,
    seek,
    sort,
    id: payments.id,
    count: stored
      ? storedCountQuery(db, accountId, stored, addedAfterMark(accountId, stored))
      : field === "created" || field === "updated"
        ? countInRange(db, paymentBuckets(accountId, field), rangeOf(field, times))
        : status
          ? countInRange(db, paymentBuckets(accountId, "created", status), rangeOf("created", times))
          : countWhere(db, payments, where),
  }, request);
  return { ...page, results: page.rows.map(storedText) };
}

/** Where a payment timestamp's ranges are counted: its buckets, or one status's `created` buckets. */
function paymentBuckets(accountId: string, field: "created" | "updated", status?: PaymentStatus): Buckets {
  const column = field === "created" ? payments.createdAt : payments.updatedAt;
  // `updated` is counted as the `created` buckets plus its moves; `created` needs no moves.
  const after = changesAfterMark(accountId, { moves: field === "updated" && !status });
  return status
    ? { accountId, key: "payments.created_at", count: statusColumn(status), table: "payments", column, also: eq(payments.status, status), after }
    : field === "created"
      ? { accountId, key: "payments.created_at", table: "payments", column, after }
      : { accountId, key: "payments.created_at", plus: "payments.updated_moves", table: "payments", column, after };
}

/** The status of a list filtered by exactly one status and nothing but bounds on created. Pure. */
export function statusWithCreated(filters: PaymentFilters): PaymentStatus | undefined {
  if (filters.status?.length !== 1) return undefined;
  const rest = { ...filters, status: undefined };
  return givenFilters(rest).length === 0 || timeCountField(rest, ["created"]) === "created" ? filters.status[0] : undefined;
}
