import { and, asc, eq, exists } from "drizzle-orm";
import type { ServiceContext } from "../../context";
import type { Db } from "../../db/client";
import { inList } from "../../db/in-list";
import { paymentEvents, paymentInvoices, payments, type PaymentStatus } from "../../db/schema";
import { notFound } from "../../errors";
import { groupBy } from "../../lib/group-by";
import type { PageRequest } from "../../lib/pagination";
import type { Instant } from "../../lib/time";
import { countKey, givenFilters, storedCountKey, storedCountQuery } from "../list-counts";
import { countWhere, listConditions, listTable } from "../../db/list-page";
import { inAccount } from "../../db/scope";
import { countInRange, createdWithStatus, rangeOf, seekBy, timeCountField, type Buckets } from "../time-counts";
import { timeConditions } from "../../db/time-filters";
import { paymentView, type EventRow, type PaymentInvoiceRow, type PaymentRow, type PaymentView } from "./view";

/** A payment's invoices as the detail lists them: by created, then id. */
function oldestFirst<Row extends { createdAt: number; id: string }>(rows: Row[]): Row[] {
  return [...rows].sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** A payment's invoice as its detail lists it, read from the link alone (one row per invoice). */
const invoiceColumns = {
  id: paymentInvoices.invoiceId,
  invoiceNumber: paymentInvoices.invoiceNumber,
  amountCents: paymentInvoices.amountCents,
  createdAt: paymentInvoices.invoiceCreatedAt,
};

/** The statements that read one payment with its invoices and events, for a batch. */
export function paymentQueries(db: Db, accountId: string, paymentId: string) {
  const ofPayment = and(inAccount(payments, accountId), eq(payments.id, paymentId));
  const scopedPayment = db.select({ id: payments.id }).from(payments).where(ofPayment);
  return [
    db.select().from(payments).where(ofPayment),
    // The invoices as copied onto the payment's links; scoped through the payment, as the events
    // are, and sorted here (an ORDER BY would need a temporary B-tree).
    db.select(invoiceColumns).from(paymentInvoices).where(and(eq(paymentInvoices.paymentId, paymentId), exists(scopedPayment))),
    // No join here: drizzle maps D1 batch rows by column name, and both tables have id and status.
    db
      .select()
      .from(paymentEvents)
      .where(and(eq(paymentEvents.paymentId, paymentId), exists(scopedPayment)))
      .orderBy(asc(paymentEvents.seq)),
  ] as const;
}

/** What paymentQueries read, as one payment; 404 when it is not the account's. */
export function loadedPayment([found, invoiceRows, events]: readonly [PaymentRow[], PaymentInvoiceRow[], EventRow[]]) {
  const payment = found[0];
  if (!payment) throw notFound();
  return { payment, invoices: oldestFirst(invoiceRows), events };
}

/** The detail as the payment's last write stored it (write-fence.ts): one row read. */
export async function getPayment({ db, accountId }: ServiceContext, paymentId: string): Promise<PaymentView> {
  const [found] = await db.select({ detail: payments.detail }).from(payments).where(and(inAccount(payments, accountId), eq(payments.id, paymentId)));
  if (!found) throw notFound();
  return storedDetail(found);
}

/** A payment row's stored detail. Every write stores it, and migration 0012 filled the rows before. */
function storedDetail(row: { detail: string | null }): PaymentView {
  if (row.detail === null) throw new Error("a payment row without its stored detail");
  return JSON.parse(row.detail) as PaymentView;
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
    // The stored detail is the whole answer; the rest of the row is not read out.
    fields: ["detail"],
    where,
    anyOf,
    seek,
    sort,
    id: payments.id,
    count: stored
      ? storedCountQuery(db, accountId, stored)
      : field === "created" || field === "updated"
        ? countInRange(db, paymentBuckets(accountId, field), rangeOf(field, times))
        : status
          ? countInRange(db, paymentBuckets(accountId, "created", status), rangeOf("created", times))
          : countWhere(db, payments, where),
  }, request);
  return { ...page, results: page.rows.map(storedDetail) };
}

/** Where a payment timestamp's ranges are counted: its buckets, or one status's `created` buckets. */
function paymentBuckets(accountId: string, field: "created" | "updated", status?: PaymentStatus): Buckets {
  const column = field === "created" ? payments.createdAt : payments.updatedAt;
  return status
    ? { accountId, key: createdWithStatus(status), table: "payments", column, also: eq(payments.status, status) }
    : { accountId, key: `payments.${field}_at`, table: "payments", column };
}

/** The status of a list filtered by exactly one status and nothing but bounds on created. Pure. */
export function statusWithCreated(filters: PaymentFilters): PaymentStatus | undefined {
  if (filters.status?.length !== 1) return undefined;
  const rest = { ...filters, status: undefined };
  return givenFilters(rest).length === 0 || timeCountField(rest, ["created"]) === "created" ? filters.status[0] : undefined;
}
