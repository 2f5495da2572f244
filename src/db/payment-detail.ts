/**
 * The payment detail (GET /v2/payments/{id}/), as every payment write stores it on the payment row
 * and every list and webhook body shows it. Its fields are listed once here, in the order it shows
 * them (DETAIL_FIELDS, EVENT_FIELDS, INVOICE_FIELDS), and so is what an event changes of it
 * (EVENT_CHANGES). Everything else is made from these lists:
 *   paymentView, eventView   the detail and an event in TypeScript, from rows;
 *   detailSql, eventSql      the SQL `json_object` a payment write stores, from SQL values;
 *   detailAfter              the detail after one event, in TypeScript;
 *   detailChangesSql         the same as SQL's `json_set`/`json_insert` of the stored detail;
 *   snapshotAt               the detail as an earlier event left it (a webhook body's `object`).
 * The lifecycle that decides which events apply is services/payments/lifecycle.ts.
 */
import { sql, type SQL } from "drizzle-orm";
import type { PaymentMethod, PaymentStatus } from "./schema";
import { toIso } from "../lib/time";

/** A payment row as the detail reads it. */
export interface DetailRow {
  id: string;
  originatingCounterpartyId: string;
  receivingCounterpartyId: string;
  amountCents: number;
  currency: string;
  paymentMethod: PaymentMethod;
  status: PaymentStatus;
  instrumentNumber: string | null;
  refundReason: string | null;
  version: number;
  createdAt: number;
  updatedAt: number;
}

/** An event row as the detail reads it. */
export interface DetailEventRow {
  id: string;
  eventCode: string;
  status: PaymentStatus;
  description: string;
  createdAt: number;
}

/** An invoice as the detail lists it. */
export interface DetailInvoiceRow {
  id: string;
  invoiceNumber: string;
  amountCents: number;
}

/** A field shown from a row's column (`time`: milliseconds shown as ISO 8601 text). */
interface ColumnField<Row> {
  column: keyof Row & string;
  time?: true;
}

const column = <Row>(name: keyof Row & string, time?: true): ColumnField<Row> => (time ? { column: name, time } : { column: name });

/** The invoices' fields, in the order the detail shows them. */
export const INVOICE_FIELDS = {
  id: column<DetailInvoiceRow>("id"),
  invoice_number: column<DetailInvoiceRow>("invoiceNumber"),
  amount_cents: column<DetailInvoiceRow>("amountCents"),
} as const;

/** An event's fields, in the order the detail shows them. */
export const EVENT_FIELDS = {
  id: column<DetailEventRow>("id"),
  event_code: column<DetailEventRow>("eventCode"),
  status: column<DetailEventRow>("status"),
  description: column<DetailEventRow>("description"),
  created: column<DetailEventRow>("createdAt", true),
} as const;

/** The detail's fields, in the order it shows them: a column of the payment row, or a list. */
export const DETAIL_FIELDS = {
  id: column<DetailRow>("id"),
  originating_counterparty_id: column<DetailRow>("originatingCounterpartyId"),
  receiving_counterparty_id: column<DetailRow>("receivingCounterpartyId"),
  invoices: "invoices",
  amount_cents: column<DetailRow>("amountCents"),
  currency: column<DetailRow>("currency"),
  payment_method: column<DetailRow>("paymentMethod"),
  status: column<DetailRow>("status"),
  instrument_number: column<DetailRow>("instrumentNumber"),
  events: "events",
  refund_reason: column<DetailRow>("refundReason"),
  // 1 at creation, one more with every event: a receiver that has seen version n drops anything older.
  version: column<DetailRow>("version"),
  created: column<DetailRow>("createdAt", true),
  updated: column<DetailRow>("updatedAt", true),
} as const;

export type DetailField = keyof typeof DETAIL_FIELDS;
export type EventField = keyof typeof EVENT_FIELDS;
export type InvoiceField = keyof typeof INVOICE_FIELDS;

/**
 * What an event changes of a payment, each with the detail's field and the row's column it sets:
 * `when` the event's input changes it, to `value`; and `left`, its value as an event's row records
 * it (for the detail as that event left it). Every event also adds one to `version` and sets
 * `updated` to its stamp, and appends itself to `events`.
 */
export interface EventInput {
  status?: PaymentStatus;
  instrument_number?: string | null;
  refund_reason?: string | null;
}
export interface EventChange {
  field: "status" | "instrument_number" | "refund_reason";
  column: "status" | "instrumentNumber" | "refundReason";
  when: (input: EventInput) => boolean;
  value: (input: EventInput) => string | null;
  left: (event: { status: string; instrumentNumber: string | null; refundReason: string | null }) => string | null;
}
export const EVENT_CHANGES: readonly EventChange[] = [
  // An event with a status moves the payment to it; without one, the status stays.
  { field: "status", column: "status", when: (input) => input.status !== undefined, value: (input) => input.status!, left: (event) => event.status },
  // An event that names an instrument number sets it (null clears it); one that does not keeps it.
  {
    field: "instrument_number",
    column: "instrumentNumber",
    when: (input) => input.instrument_number !== undefined,
    value: (input) => input.instrument_number ?? null,
    left: (event) => event.instrumentNumber,
  },
  // Only the move to refunded sets the refund reason; every later event keeps it.
  {
    field: "refund_reason",
    column: "refundReason",
    when: (input) => input.status === "refunded",
    value: (input) => input.refund_reason ?? null,
    left: (event) => event.refundReason,
  },
];

/** The changes an event's input makes. Pure. */
export const changesOf = (input: EventInput) => EVENT_CHANGES.filter((change) => change.when(input));

/** A row's fields as a list shows them. */
function shown<Row>(fields: Record<string, ColumnField<Row>>, row: Row): Record<string, unknown> {
  return Object.fromEntries(Object.entries(fields).map(([name, field]) => [name, field.time ? toIso(row[field.column] as number) : row[field.column]]));
}

export interface EventView {
  id: string;
  event_code: string;
  status: PaymentStatus;
  description: string;
  created: string;
}

export interface PaymentView {
  id: string;
  originating_counterparty_id: string;
  receiving_counterparty_id: string;
  invoices: { id: string; invoice_number: string; amount_cents: number }[];
  amount_cents: number;
  currency: string;
  payment_method: PaymentMethod;
  status: PaymentStatus;
  instrument_number: string | null;
  events: EventView[];
  refund_reason: string | null;
  version: number;
  created: string;
  updated: string;
}

export function eventView(event: DetailEventRow): EventView {
  return shown(EVENT_FIELDS, event) as unknown as EventView;
}

/** The payment detail from its row, its invoices (oldest first) and its events. Pure. */
export function paymentView(payment: DetailRow, invoiceRows: DetailInvoiceRow[], events: (DetailEventRow & { seq: number })[]): PaymentView {
  const lists = {
    invoices: invoiceRows.map((row) => shown(INVOICE_FIELDS, row)),
    events: [...events].sort((a, b) => a.seq - b.seq).map(eventView),
  };
  return Object.fromEntries(
    Object.entries(DETAIL_FIELDS).map(([name, field]) => [
      name,
      typeof field === "string" ? lists[field] : field.time ? toIso(payment[field.column] as number) : payment[field.column],
    ]),
  ) as unknown as PaymentView;
}

/** SQL's `json_object` of the fields, in their order, from an SQL value for each. */
function objectSql<F extends string>(fields: Record<F, unknown>, values: Record<F, SQL>): SQL {
  return sql`json_object(${sql.join(
    (Object.keys(fields) as F[]).map((name) => sql`${sql.raw(`'${name}'`)}, ${values[name]}`),
    sql`, `,
  )})`;
}

/** The stored detail as SQL, from an SQL value for each field (the lists as JSON). */
export const detailSql = (values: Record<DetailField, SQL>) => objectSql(DETAIL_FIELDS, values);
/** An event as the detail lists it, as SQL. */
export const eventSql = (values: Record<EventField, SQL>) => objectSql(EVENT_FIELDS, values);
/** An invoice as the detail lists it, as SQL. */
export const invoiceSql = (values: Record<InvoiceField, SQL>) => objectSql(INVOICE_FIELDS, values);

/** Text as the JSON JavaScript writes of it, for SQL to put in a JSON document as it is (a lone surrogate included). */
export function jsonOf(value: string | null): SQL {
  return sql`json(${JSON.stringify(value)})`;
}

/** The detail after one event, from the detail before it: the fields the event changes, `version`, `updated`, the event appended. Pure. */
export function detailAfter(before: PaymentView, input: EventInput, event: DetailEventRow, version: number): PaymentView {
  const changed = Object.fromEntries(changesOf(input).map((change) => [change.field, change.value(input)]));
  return { ...before, ...changed, events: [...before.events, eventView(event)], version, updated: toIso(event.createdAt) };
}

/**
 * `detailAfter` as SQL over the stored detail `stored`: what the event names set in place, the
 * version and `updated`, and the event (as `eventSql` makes it) appended.
 */
export function detailChangesSql(stored: SQL, input: EventInput, { version, updated, event }: { version: SQL; updated: SQL; event: SQL }): SQL {
  const path = (field: string) => sql.raw(`'$.${field}'`);
  const changes = [
    ...changesOf(input).map((change) => sql`${path(change.field)}, ${jsonOf(change.value(input))}`),
    sql`${path("version")}, ${version}`,
    sql`${path("updated")}, ${updated}`,
  ];
  return sql`json_insert(json_set(${stored}, ${sql.join(changes, sql`, `)}), '$.events[#]', ${event})`;
}

/** What an event row recorded of the payment it left: its place, and what EVENT_CHANGES read of it. */
export interface EventState {
  seq: number;
  instrumentNumber: string | null;
  refundReason: string | null;
}

/**
 * The detail as it was right after event `seq`, from the detail now: the events up to it, the
 * fields EVENT_CHANGES set as that event left them, its version and `updated`. Pure; equal, key
 * order included, to the detail that change wrote (an event only ever appends to the detail).
 */
export function snapshotAt<D extends Pick<PaymentView, EventChange["field"] | "version" | "updated"> & { events: { status: string; created: string }[] }>(
  detail: D,
  event: EventState,
): D {
  const events = detail.events.slice(0, event.seq);
  const last = events.at(-1)!;
  const left = { status: last.status, instrumentNumber: event.instrumentNumber, refundReason: event.refundReason };
  const fields = Object.fromEntries(EVENT_CHANGES.map((change) => [change.field, change.left(left)]));
  return { ...detail, ...fields, events, version: event.seq, updated: last.created };
}
