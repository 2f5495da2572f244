import { sql, type SQL } from "drizzle-orm";
import type { WebhookContentType } from "../../db/schema";

export interface ExpansionFlags {
  invoiceIds: boolean;
  paymentStatus: boolean;
  paymentEvents: boolean;
  refundReason: boolean;
  instrumentNumber: boolean;
  allPaymentDetails: boolean;
}

/** The payment detail (GET /v2/payments/{id}/) as a delivery body carries it; the payments service's view. */
export interface PaymentSnapshot {
  id: string;
  invoices: { id: string }[];
  status: string;
  events: unknown[];
  refund_reason: string | null;
  instrument_number: string | null;
  version: number;
}

/**
 * The flags, stated once: each its bit in a delivery row's number, and what it adds to a body
 * (`allPaymentDetails` adds the whole detail as `object`, and nothing else).
 */
const FLAG_BITS: [keyof ExpansionFlags, number, (payment: PaymentSnapshot) => [string, unknown]][] = [
  ["invoiceIds", 1, (payment) => ["invoice_ids", payment.invoices.map((invoice) => invoice.id)]],
  ["paymentStatus", 2, (payment) => ["payment_status", payment.status]],
  ["paymentEvents", 4, (payment) => ["payment_events", payment.events]],
  ["refundReason", 8, (payment) => ["refund_reason", payment.refund_reason]],
  ["instrumentNumber", 16, (payment) => ["instrument_number", payment.instrument_number]],
  ["allPaymentDetails", 32, (payment) => ["object", payment]],
];

/** A subscription's flags as the small number a delivery row keeps of them. Pure. */
export function flagBits(flags: ExpansionFlags): number {
  return FLAG_BITS.reduce((bits, [name, bit]) => (flags[name] ? bits | bit : bits), 0);
}

/** `flagBits` as SQL over a subscription row's flag columns (`column(name)`). */
export function flagBitsSql(column: (name: keyof ExpansionFlags) => SQL): SQL<number> {
  return sql<number>`(${sql.join(
    FLAG_BITS.map(([name, bit]) => sql`(case when ${column(name)} then ${sql.raw(String(bit))} else 0 end)`),
    sql` + `,
  )})`;
}

/** The flags a delivery row's number stands for. Pure. */
export function flagsOf(bits: number): ExpansionFlags {
  return Object.fromEntries(FLAG_BITS.map(([name, bit]) => [name, (bits & bit) !== 0])) as unknown as ExpansionFlags;
}

/** The delivery body (docs/interface.md, "Webhooks") for one subscription's flags. */
export function payloadFor(payment: PaymentSnapshot, flags: ExpansionFlags): Record<string, unknown> {
  const body: Record<string, unknown> = { object_type: "payment", object_id: payment.id, event: "payment.changed" };
  const shown = flags.allPaymentDetails ? FLAG_BITS.filter(([name]) => name === "allPaymentDetails") : FLAG_BITS.filter(([name]) => flags[name]);
  return Object.assign(body, Object.fromEntries(shown.map(([, , field]) => field(payment))));
}

/**
 * The exact bytes to send. Form bodies: each top-level key a field, arrays of strings repeat the
 * key, objects and arrays of objects go as JSON text, null as an empty value.
 */
export function encodeBody(payload: Record<string, unknown>, contentType: WebhookContentType): string {
  if (contentType === "application/json") return JSON.stringify(payload);
  const form = new URLSearchParams();
  for (const [key, value] of Object.entries(payload)) {
    if (Array.isArray(value) && value.every((item) => typeof item === "string")) {
      for (const item of value) form.append(key, item);
    } else if (value !== null && typeof value === "object") {
      form.append(key, JSON.stringify(value));
    } else {
      form.append(key, value === null || value === undefined ? "" : String(value));
    }
  }
  return form.toString();
}
