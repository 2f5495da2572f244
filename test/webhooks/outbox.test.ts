import { describe, expect, it } from "vitest";
import { detailAfter, paymentView, snapshotAt, type PaymentView } from "../../src/db/payment-detail";
import { applyEvent, type EventRow, type PaymentEventFields, type PaymentRow } from "../../src/services/payments/lifecycle";
import { newPayment } from "../helpers/lifecycle-oracle";
import { encodeBody, flagBits, flagBitsSql, flagsOf, payloadFor, type ExpansionFlags } from "../../src/webhooks/wire/payload";
import { env } from "cloudflare:test";
import { sql } from "drizzle-orm";
import { createDb } from "../../src/db/client";

const FLAG_SETS: ExpansionFlags[] = [
  { invoiceIds: false, paymentStatus: false, paymentEvents: false, refundReason: false, instrumentNumber: false, allPaymentDetails: false },
  { invoiceIds: true, paymentStatus: true, paymentEvents: true, refundReason: false, instrumentNumber: false, allPaymentDetails: false },
  { invoiceIds: false, paymentStatus: true, paymentEvents: false, refundReason: true, instrumentNumber: true, allPaymentDetails: false },
  { invoiceIds: false, paymentStatus: false, paymentEvents: false, refundReason: false, instrumentNumber: false, allPaymentDetails: true },
  { invoiceIds: true, paymentStatus: true, paymentEvents: true, refundReason: true, instrumentNumber: true, allPaymentDetails: true },
];

describe("a delivery row's flags", () => {
  it.each(FLAG_SETS.map((flags) => [flagBits(flags), flags] as const))("%i stands for its flags and back", (bits, flags) => {
    expect(flagsOf(bits)).toEqual(flags);
    expect(bits).toBeLessThan(64);
  });

  // The write's batch takes a delivery's flags from its subscription's columns in SQL (webhooks/outbox).
  it.each(FLAG_SETS.map((flags) => [flagBits(flags), flags] as const))("%i is what the SQL makes of the same columns", async (bits, flags) => {
    const made = await createDb(env.SHARD_A!).get<{ bits: number }>(sql`select ${flagBitsSql((name) => sql`${flags[name] ? 1 : 0}`)} as bits`);
    expect(made.bits).toBe(bits);
  });
});

/** A payment's detail after each of its changes, as the writes store it (services/payments). */
function history(): PaymentView[] {
  const invoices = [{ id: "inv_a", invoiceNumber: 'A-1 "quoted"\n', amountCents: 1000, createdAt: 10, currency: "EUR" }];
  const made = newPayment(
    "acct_1",
    "pmt_1",
    { originating_counterparty_id: "cpty_b", receiving_counterparty_id: "cpty_s", invoice_ids: ["inv_a"], payment_method: "ach" },
    invoices,
    { at: 1_000, eventId: "pev_1" },
  );
  let payment: PaymentRow = made.payment;
  const events: EventRow[] = [made.event];
  const details = [paymentView(payment, invoices, events)];
  const inputs: PaymentEventFields[] = [
    { event_code: "PU10", description: "Sent ✓", status: "in-progress", instrument_number: "ACH-9" },
    { event_code: "PU15", description: "note, & = ?" },
    { event_code: "PU16", description: "cleared", instrument_number: null },
    { event_code: "PU20", description: "Paid", status: "settled", instrument_number: "TR-1" },
    { event_code: "PU30", description: "Refund", status: "refunded", refund_reason: "Paid twice: 100%" },
    { event_code: "PU31", description: "after the refund" },
  ];
  for (const [i, input] of inputs.entries()) {
    const { next, event } = applyEvent(payment, input, { at: 2_000 + i * 111, eventId: `pev_${i + 2}` });
    details.push(detailAfter(details.at(-1)!, input, event, next.version));
    events.push(event);
    payment = next;
  }
  return details.map((detail, i) => ({ ...detail, _events: events.slice(0, i + 1) }) as PaymentView);
}

describe("a body rebuilt from the payment's detail now", () => {
  const details = history();
  const now = JSON.parse(JSON.stringify(details.at(-1)!, (key, value) => (key === "_events" ? undefined : value))) as PaymentView;
  const events = (details.at(-1) as unknown as { _events: EventRow[] })._events;

  it.each(details.map((detail, i) => [i + 1, detail] as const))(
    "after change %i is the detail that change wrote, byte for byte, in each content type and flag set",
    (seq, detail) => {
      const event = events[seq - 1]!;
      const written = JSON.parse(JSON.stringify(detail, (key, value) => (key === "_events" ? undefined : value)));
      const rebuilt = snapshotAt(now, { seq, instrumentNumber: event.instrumentNumber, refundReason: event.refundReason });
      expect(JSON.stringify(rebuilt)).toBe(JSON.stringify(written));
      for (const flags of FLAG_SETS) {
        for (const contentType of ["application/json", "application/x-www-form-urlencoded"] as const) {
          expect(encodeBody(payloadFor(rebuilt, flags), contentType)).toBe(encodeBody(payloadFor(written, flags), contentType));
        }
      }
    },
  );
});
