import { UNKEYED, type Keyed, type KeyedWrite } from "../idempotency";
import { LARGEST_ROW_BYTES } from "../lib/list-bounds";
import { and, eq, sql } from "drizzle-orm";
import type { ServiceContext } from "../context";
import { invoices, paymentInvoices } from "../db/schema";
import { invalid, notFound, type FieldErrors } from "../errors";
import { newId } from "../lib/ids";
import { runNamedBatch } from "../db/client";
import { guardedInsert } from "../db/guarded-insert";
import type { PageRequest } from "../lib/pagination";
import type { Instant } from "../lib/time";
import { isCounterparty, selectCounterparty } from "./counterparties";
import { countAt, countingOf, countInRange, countKey, countOne, rangeOf, seekBy, storedCountQuery, type Buckets } from "./counts";
import { countWhere, listConditions, listTable } from "../db/list-page";
import { inAccount } from "../db/scope";
import { timeConditions } from "../db/time-filters";
import { iso, jsonView } from "../db/json-view";

export type Invoice = typeof invoices.$inferSelect;

/** An invoice as the API shows it. */
export const invoiceView = jsonView(invoices, {
  id: "id",
  invoice_number: "invoiceNumber",
  buyer_id: "buyerId",
  supplier_id: "supplierId",
  amount_cents: "amountCents",
  currency: "currency",
  created: iso("createdAt"),
  updated: iso("updatedAt"),
});

export interface InvoiceFields {
  invoice_number: string;
  buyer_id: string;
  supplier_id: string;
  amount_cents: number;
  currency: string;
}

export type InvoiceFilters = { invoice_number?: string[] } & Record<string, Instant | string[] | undefined>;

/**
 * Creates an invoice in one batch: it is inserted only where its counterparties are the account's
 * buyer and supplier, with its counts; the batch reads them back, so one that was not made says
 * why (400).
 */
export async function createInvoice(ctx: ServiceContext, input: InvoiceFields, keyed: KeyedWrite<Invoice> = UNKEYED): Promise<Keyed<Invoice>> {
  const { db, accountId } = ctx;
  const now = Date.now();
  const row: Invoice = {
    id: newId("inv"),
    accountId,
    invoiceNumber: input.invoice_number,
    buyerId: input.buyer_id,
    supplierId: input.supplier_id,
    amountCents: input.amount_cents,
    currency: input.currency,
    createdAt: now,
    updatedAt: now,
  };
  const made = sql`exists (select 1 from ${invoices} i where i.id = ${row.id})`;
  const batch = await runNamedBatch(db, {
    key: keyed.claim,
    insert: guardedInsert(
      db,
      invoices,
      row,
      sql`${keyed.owns} and ${isCounterparty(accountId, input.buyer_id, "buyer")} and ${isCounterparty(accountId, input.supplier_id, "supplier")}`,
    ).returning({ id: invoices.id }),
    count: countOne(db, accountId, countKey("invoices"), made),
    buckets: countAt(db, accountId, "invoices.created_at", row.createdAt, { n: 1 }, made),
    answer: await keyed.answer(row, made),
    // What the check looks at, for an invoice that could not be made.
    buyer: selectCounterparty(db, accountId, input.buyer_id),
    supplier: selectCounterparty(db, accountId, input.supplier_id),
  });
  const decided = keyed.decided(batch.key);
  if (decided) return { decided };
  if (batch.insert.length > 0) return { ran: row };
  const errors: FieldErrors = {};
  checkParty(batch.buyer[0], input.buyer_id, "buyer", "buyer_id", errors);
  checkParty(batch.supplier[0], input.supplier_id, "supplier", "supplier_id", errors);
  throw Object.keys(errors).length > 0 ? invalid(errors) : new Error(`an invoice whose counterparties passed was not made (account ${accountId})`);
}

/** Adds `field`'s error when the counterparty read for it is not there, or not a `type`. */
function checkParty(party: { type: string } | undefined, id: string, type: "buyer" | "supplier", field: string, errors: FieldErrors) {
  if (!party) errors[field] = [`Invalid pk "${id}" - object does not exist.`];
  else if (party.type !== type) errors[field] = [`Counterparty ${id} is not a ${type}.`];
}

/**
 * The invoice, and the payment that holds it now: the one not canceled or failed, whose link
 * is live (db/schema/payment-invoices.ts); null when none does.
 */
export async function getInvoice({ db, accountId }: ServiceContext, id: string): Promise<Invoice & { paymentId: string | null }> {
  const l = paymentInvoices;
  const row = await db
    .select({
      invoice: invoices,
      paymentId: sql<string | null>`(select ${l.paymentId} from ${l} where ${l.invoiceId} = ${invoices.id} and ${l.releasedBy} = '')`,
    })
    .from(invoices)
    .where(and(inAccount(invoices, accountId), eq(invoices.id, id)))
    .get();
  if (!row) throw notFound();
  return { ...row.invoice, paymentId: row.paymentId };
}

/** Where invoices' `created` ranges are counted. */
function createdBuckets(accountId: string): Buckets {
  return { accountId, key: "invoices.created_at", table: "invoices", column: invoices.createdAt };
}

export function listInvoices({ db, accountId }: ServiceContext, filters: InvoiceFilters, request: PageRequest) {
  const times = filters as Record<string, Instant | undefined>;
  const { where, anyOf } = listConditions(
    [inAccount(invoices, accountId), ...timeConditions(invoices.createdAt, "created", times)],
    [{ column: invoices.invoiceNumber, values: filters.invoice_number }],
  );
  const counting = countingOf("invoices", filters, { fields: ["created"], sort: "created" });
  return listTable(
    db,
    invoices,
    {
      largestRowBytes: LARGEST_ROW_BYTES.invoices,
      // Each row's view, made by SQL: the page's rows come ready to send (with their keys, for links).
      fields: ["id", "createdAt"],
      made: { json: invoiceView.json },
      where,
      anyOf,
      seek: counting.seek ? seekBy(db, createdBuckets(accountId), rangeOf("created", times)) : undefined,
      sort: invoices.createdAt,
      id: invoices.id,
      count:
        counting.count.by === "stored"
          ? storedCountQuery(db, accountId, counting.count.key)
          : counting.count.by === "buckets"
            ? countInRange(db, createdBuckets(accountId), rangeOf("created", times))
            : countWhere(db, invoices, where),
    },
    request,
  );
}
