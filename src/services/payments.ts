import { and, asc, eq, exists, sql, type SQL } from "drizzle-orm";
import type { Db } from "../db/client";
import { inList } from "../db/in-list";
import { isUniqueViolation } from "../db/errors";
import { guardedInsert } from "../db/guarded-insert";
import {
  invoices,
  paymentEvents,
  paymentInvoices,
  payments,
  type PaymentMethod,
  type PaymentStatus,
} from "../db/schema";
import { AppError, conflict, invalid, invalidField, notFound, type FieldErrors } from "../errors";
import { groupBy } from "../lib/group-by";
import { newId, newToken } from "../lib/ids";
import type { PageRequest } from "../lib/pagination";
import type { Instant } from "../lib/time";
import { getCounterparty } from "./counterparties";
import { countKey, countOneIf, storedCount, storedCountKey, uncountOneIf } from "./list-counts";
import { countWhere, listConditions, listTable } from "./list-page";
import { countAt, countInRange, rangeOf, seekBy, timeCountField } from "./time-counts";
import { applyEvent, type PaymentEventInput } from "./payment-lifecycle";
import { releasesInvoices } from "./payment-status";
import { eventView, paymentView, type EventRow, type PaymentInvoiceRow, type PaymentRow, type PaymentView } from "./payment-view";
import { inAccount } from "./scope";
import { timeConditions } from "./time-filters";

export interface CreatePaymentInput {
  originating_counterparty_id: string;
  receiving_counterparty_id: string;
  invoice_ids: string[];
  payment_method: PaymentMethod;
}

/**
 * Extra statements for a payment write's own batch (the webhook outbox). They run only when the
 * write itself applied: `guard` holds exactly then. `afterCommit` runs once the batch has committed.
 */
export type OutboxWriter = (
  db: Db,
  accountId: string,
  detail: PaymentView,
  guard: SQL,
) => Promise<{ statements: BatchStatement[]; afterCommit: () => Promise<void> }>;
export type BatchStatement = Parameters<Db["batch"]>[0][number];

const noOutbox: OutboxWriter = async () => ({ statements: [], afterCommit: async () => {} });
const MAX_ATTEMPTS = 40;

export async function createPayment(
  db: Db,
  accountId: string,
  input: CreatePaymentInput,
  outbox: OutboxWriter = noOutbox,
): Promise<PaymentView> {
  const chosen = await checkPaymentInput(db, accountId, input);
  const amount = chosen.reduce((sum, invoice) => sum + invoice.amountCents, 0);
  const id = newId("pmt");

  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    const [, stamp] = await Promise.all([refuseClaimedInvoices(db, input.invoice_ids), nextStamp(db, accountId)]);
    const payment: PaymentRow = {
      id,
      accountId,
      originatingCounterpartyId: input.originating_counterparty_id,
      receivingCounterpartyId: input.receiving_counterparty_id,
      amountCents: amount,
      currency: chosen[0]!.currency,
      paymentMethod: input.payment_method,
      status: "pending",
      instrumentNumber: null,
      refundReason: null,
      version: 1,
      writeToken: newToken(),
      createdAt: stamp,
      updatedAt: stamp,
    };
    const event: EventRow = {
      id: newId("pev"),
      paymentId: id,
      seq: 1,
      eventCode: "PU00",
      status: "pending",
      description: "Payment created",
      createdAt: stamp,
    };
    const detail = paymentView(payment, chosen, [event]);
    const applied = writtenBy(payment);
    const outboxed = await outbox(db, accountId, detail, applied);
    const statements: BatchStatement[] = [
      guardedInsert(db, payments, payment, stampIsNewest(accountId, stamp)),
      ...chosen.map((invoice) => guardedInsert(db, paymentInvoices, { paymentId: id, invoiceId: invoice.id, active: 1 }, applied)),
      guardedInsert(db, paymentEvents, event, applied),
      ...[
        countKey("payments"),
        countKey("payments", "status", payment.status),
        countKey("payments", "originating_counterparty_id", payment.originatingCounterpartyId),
        countKey("payments", "receiving_counterparty_id", payment.receivingCounterpartyId),
      ].map((key) => countOneIf(db, accountId, key, applied)),
      countAt(db, accountId, "payments.created_at", stamp, 1, applied),
      countAt(db, accountId, "payments.updated_at", stamp, 1, applied),
      ...outboxed.statements,
    ];
    try {
      const [inserted] = await db.batch(statements as [BatchStatement, ...BatchStatement[]]);
      if (changes(inserted) === 1) {
        await outboxed.afterCommit();
        return detail;
      }
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      // Another payment claimed an invoice between the check and the batch; the next round says which.
    }
    await backoff(attempt);
  }
  throw busy();
}

/** Validates the counterparties and invoices of a new payment; returns the invoices, in request order. */
async function checkPaymentInput(db: Db, accountId: string, input: CreatePaymentInput): Promise<(PaymentInvoiceRow & { currency: string })[]> {
  const errors: FieldErrors = {};
  const [buyer, supplier] = await Promise.all([
    getCounterparty(db, accountId, input.originating_counterparty_id).catch(() => null),
    getCounterparty(db, accountId, input.receiving_counterparty_id).catch(() => null),
  ]);
  if (!buyer) errors.originating_counterparty_id = [`Invalid pk "${input.originating_counterparty_id}" - object does not exist.`];
  else if (buyer.type !== "buyer") errors.originating_counterparty_id = ["The originating counterparty must be a buyer."];
  if (!supplier) errors.receiving_counterparty_id = [`Invalid pk "${input.receiving_counterparty_id}" - object does not exist.`];
  else if (supplier.type !== "supplier") errors.receiving_counterparty_id = ["The receiving counterparty must be a supplier."];

  if (new Set(input.invoice_ids).size !== input.invoice_ids.length) {
    errors.invoice_ids = ["Each invoice may appear only once."];
    throw invalid(errors);
  }
  const found = await db
    .select()
    .from(invoices)
    .where(and(inAccount(invoices, accountId), inList(invoices.id, input.invoice_ids)));
  const byId = new Map(found.map((invoice) => [invoice.id, invoice]));
  const invoiceErrors: string[] = [];
  for (const invoiceId of input.invoice_ids) {
    const invoice = byId.get(invoiceId);
    if (!invoice) invoiceErrors.push(`Invalid pk "${invoiceId}" - object does not exist.`);
    else if (invoice.buyerId !== input.originating_counterparty_id || invoice.supplierId !== input.receiving_counterparty_id) {
      invoiceErrors.push(`Invoice ${invoiceId} is not between the payment's buyer and supplier.`);
    }
  }
  if (invoiceErrors.length === 0 && new Set(found.map((invoice) => invoice.currency)).size > 1) {
    invoiceErrors.push("All invoices of a payment must have the same currency.");
  }
  if (invoiceErrors.length > 0) errors.invoice_ids = invoiceErrors;
  if (Object.keys(errors).length > 0) throw invalid(errors);
  return input.invoice_ids.map((invoiceId) => byId.get(invoiceId)!);
}

async function refuseClaimedInvoices(db: Db, invoiceIds: string[]): Promise<void> {
  const claimed = await db
    .select({ invoiceId: paymentInvoices.invoiceId, paymentId: paymentInvoices.paymentId })
    .from(paymentInvoices)
    .where(and(inList(paymentInvoices.invoiceId, invoiceIds), eq(paymentInvoices.active, 1)))
    .get();
  if (claimed) throw conflict(`Invoice ${claimed.invoiceId} already belongs to payment ${claimed.paymentId}.`);
}

export async function recordPaymentEvent(
  db: Db,
  accountId: string,
  paymentId: string,
  input: PaymentEventInput,
  outbox: OutboxWriter = noOutbox,
) {
  checkEventInput(input);
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    const [current, stamp] = await Promise.all([loadPayment(db, accountId, paymentId), nextStamp(db, accountId)]);
    const { payment } = current;
    const { next, event } = applyEvent(payment, input, { eventId: newId("pev"), writeToken: newToken(), at: stamp });
    const detail = paymentView(next, current.invoices, [...current.events, event]);
    const applied = writtenBy(next);
    const outboxed = await outbox(db, accountId, detail, applied);
    const statements: BatchStatement[] = [
      db
        .update(payments)
        .set({
          status: next.status,
          instrumentNumber: next.instrumentNumber,
          refundReason: next.refundReason,
          version: next.version,
          writeToken: next.writeToken,
          updatedAt: next.updatedAt,
        })
        .where(and(inAccount(payments, accountId), eq(payments.id, paymentId), eq(payments.writeToken, payment.writeToken), stampIsNewest(accountId, stamp))),
      guardedInsert(db, paymentEvents, event, applied),
      countAt(db, accountId, "payments.updated_at", payment.updatedAt, -1, applied),
      countAt(db, accountId, "payments.updated_at", next.updatedAt, 1, applied),
      ...(next.status !== payment.status
        ? [
            uncountOneIf(db, accountId, countKey("payments", "status", payment.status), applied),
            countOneIf(db, accountId, countKey("payments", "status", next.status), applied),
          ]
        : []),
      ...(releasesInvoices(next.status) && !releasesInvoices(payment.status)
        ? [db.update(paymentInvoices).set({ active: 0 }).where(and(eq(paymentInvoices.paymentId, paymentId), applied))]
        : []),
      ...outboxed.statements,
    ];
    const [updated] = await db.batch(statements as [BatchStatement, ...BatchStatement[]]);
    if (changes(updated) === 1) {
      await outboxed.afterCommit();
      return eventView(event);
    }
    await backoff(attempt);
  }
  throw busy();
}

function checkEventInput(input: PaymentEventInput): void {
  if (input.status === "refunded" && !input.refund_reason) {
    throw invalidField("refund_reason", "This field is required when status is refunded.");
  }
  if (input.status !== "refunded" && input.refund_reason != null) {
    throw invalidField("refund_reason", "A refund reason is only accepted with status refunded.");
  }
}

/** A timestamp later than every `updated` of the account, so `updated__gt` polling misses nothing. */
async function nextStamp(db: Db, accountId: string): Promise<number> {
  const row = await db
    .select({ latest: sql<number | null>`max(${payments.updatedAt})` })
    .from(payments)
    .where(inAccount(payments, accountId))
    .get();
  return Math.max(Date.now(), (row?.latest ?? 0) + 1);
}

/** Holds inside a batch while no other write of the account took `stamp` or a later one. */
function stampIsNewest(accountId: string, stamp: number): SQL {
  return sql`(select coalesce(max(p.updated_at), 0) from ${payments} p where p.account_id = ${accountId}) < ${stamp}`;
}

/** Holds inside a batch once this write's row is in place. */
function writtenBy(payment: PaymentRow): SQL {
  return sql`exists (select 1 from ${payments} p where p.id = ${payment.id} and p.write_token = ${payment.writeToken})`;
}

function changes(result: unknown): number {
  return (result as D1Result | undefined)?.meta?.changes ?? 0;
}

function busy(): AppError {
  return new AppError("busy", "The payment is being changed by other requests; retry shortly.", undefined, { "Retry-After": "1" });
}

async function backoff(attempt: number): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(50, 2 * attempt)));
}

/** A payment's invoices as the detail lists them: by created, then id. */
function oldestFirst<Row extends { createdAt: number; id: string }>(rows: Row[]): Row[] {
  return [...rows].sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

async function loadPayment(db: Db, accountId: string, paymentId: string) {
  const ofPayment = and(inAccount(payments, accountId), eq(payments.id, paymentId));
  const scopedPayment = db.select({ id: payments.id }).from(payments).where(ofPayment);
  const [found, invoiceRows, events] = await db.batch([
    db.select().from(payments).where(ofPayment),
    // Scoped through the payment, as the events are, and sorted here: with an account condition or
    // an ORDER BY on invoices, SQLite walks every invoice of the account (1,000,000 rows read at scale).
    db
      .select({ id: invoices.id, invoiceNumber: invoices.invoiceNumber, amountCents: invoices.amountCents, createdAt: invoices.createdAt })
      .from(paymentInvoices)
      .innerJoin(invoices, eq(invoices.id, paymentInvoices.invoiceId))
      .where(and(eq(paymentInvoices.paymentId, paymentId), exists(scopedPayment))),
    // No join here: drizzle maps D1 batch rows by column name, and both tables have id and status.
    db
      .select()
      .from(paymentEvents)
      .where(and(eq(paymentEvents.paymentId, paymentId), exists(scopedPayment)))
      .orderBy(asc(paymentEvents.seq)),
  ]);
  const payment = found[0];
  if (!payment) throw notFound();
  return { payment, invoices: oldestFirst(invoiceRows), events };
}

export async function getPayment(db: Db, accountId: string, paymentId: string): Promise<PaymentView> {
  const { payment, invoices: invoiceRows, events } = await loadPayment(db, accountId, paymentId);
  return paymentView(payment, invoiceRows, events);
}

export interface PaymentFilters {
  status?: PaymentStatus[];
  originating_counterparty_id?: string[];
  receiving_counterparty_id?: string[];
  ordering?: "created" | "updated";
  [time: string]: Instant | string[] | string | undefined;
}

export async function listPayments(db: Db, accountId: string, filters: PaymentFilters, request: PageRequest) {
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
  // page=N by the time buckets of the sort timestamp, when the only filters bound that timestamp.
  const sortField = filters.ordering === "updated" ? "updated" : "created";
  const field = timeCountField(filters, ["created", "updated"]);
  const seek =
    stored === countKey("payments") || field === sortField
      ? seekBy(db, accountId, `payments.${sortField}_at`, "payments", sort, rangeOf(sortField, times))
      : undefined;
  const page = await listTable(db, payments, {
    where,
    anyOf,
    seek,
    sort,
    id: payments.id,
    count: () => {
      if (stored) return storedCount(db, accountId, stored);
      if (field === "created") return countInRange(db, accountId, "payments.created_at", "payments", payments.createdAt, rangeOf("created", times));
      if (field === "updated") return countInRange(db, accountId, "payments.updated_at", "payments", payments.updatedAt, rangeOf("updated", times));
      return countWhere(db, payments, where);
    },
  }, request);
  return { ...page, results: await withDetails(db, page.rows) };
}

/** Payment rows to details, reading the page's invoices and events in one round trip. */
async function withDetails(db: Db, rows: PaymentRow[]): Promise<PaymentView[]> {
  if (rows.length === 0) return [];
  const ids = rows.map((row) => row.id);
  const [invoiceRows, events] = await db.batch([
    db
      .select({ paymentId: paymentInvoices.paymentId, id: invoices.id, invoiceNumber: invoices.invoiceNumber, amountCents: invoices.amountCents, createdAt: invoices.createdAt })
      .from(paymentInvoices)
      .innerJoin(invoices, eq(invoices.id, paymentInvoices.invoiceId))
      .where(inList(paymentInvoices.paymentId, ids)),
    // Unordered: paymentView orders each payment's events by seq (an ORDER BY here needs a temporary B-tree).
    db.select().from(paymentEvents).where(inList(paymentEvents.paymentId, ids)),
  ]);
  const invoicesOf = groupBy(oldestFirst(invoiceRows), (row) => row.paymentId);
  const eventsOf = groupBy(events, (row) => row.paymentId);
  return rows.map((row) => paymentView(row, invoicesOf.get(row.id) ?? [], eventsOf.get(row.id) ?? []));
}
