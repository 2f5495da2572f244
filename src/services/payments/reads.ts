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
import { addedAfterMark, changesAfterMark, countingOf, countInRange, rangeOf, seekBy, storedCountQuery, type Buckets } from "../counts";
import { timeConditions } from "../../db/time-filters";
import type { PaymentView } from "../../db/payment-detail";

/** The detail as the payment's last write stored it (write-fence.ts): one row read. */
export async function getPayment({ db, accountId }: ServiceContext, paymentId: string): Promise<PaymentView> {
  const [found] = await db
    .select({ detail: payments.detail })
    .from(payments)
    .where(and(inAccount(payments, accountId), eq(payments.id, paymentId)));
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
  const [row] = await db
    .select({ detail: payments.detail })
    .from(payments)
    .where(inAccount(payments, accountId))
    .orderBy(desc(payments.createdAt), desc(payments.id))
    .limit(fixedLimit(1));
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
  const sort = filters.ordering === "updated" ? payments.updatedAt : payments.createdAt;
  const sortField = filters.ordering === "updated" ? "updated" : "created";
  const counting = countingOf("payments", filters, { fields: ["created", "updated"], sort: sortField, perStatus: true });
  const buckets = (choice: { field: string; status?: string }) =>
    paymentBuckets(accountId, choice.field as "created" | "updated", choice.status as PaymentStatus | undefined);
  const seek = counting.seek && seekBy(db, buckets(counting.seek), rangeOf(counting.seek.field, times));
  const page = await listTable(
    db,
    payments,
    {
      largestRowBytes: LARGEST_ROW_BYTES.payments,
      large: payments.detail,
      // The stored detail is the whole answer; the rest of the row is not read out.
      fields: ["detail"],
      where,
      anyOf,
      seek: seek ?? undefined,
      sort,
      id: payments.id,
      count:
        counting.count.by === "stored"
          ? storedCountQuery(db, accountId, counting.count.key, addedAfterMark(accountId, counting.count.key))
          : counting.count.by === "buckets"
            ? countInRange(db, buckets(counting.count), rangeOf(counting.count.field, times))
            : countWhere(db, payments, where),
    },
    request,
  );
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
