import { describe, expect, it } from "vitest";
import type { PaymentView } from "../../src/db/payment-detail";
import { encodeBody, payloadFor, type ExpansionFlags } from "../../src/webhooks/wire/payload";

const payment: PaymentView = {
  id: "pmt_1",
  originating_counterparty_id: "cpty_b",
  receiving_counterparty_id: "cpty_s",
  invoices: [
    { id: "inv_1", invoice_number: "A-1", amount_cents: 1000 },
    { id: "inv_2", invoice_number: "A-2", amount_cents: 250 },
  ],
  amount_cents: 1250,
  currency: "USD",
  payment_method: "ach",
  status: "settled",
  instrument_number: "TRACE-9",
  events: [{ id: "pev_1", event_code: "PU00", status: "pending", description: "Payment created", created: "2026-11-21T10:00:00.000Z" }],
  refund_reason: null,
  version: 1,
  created: "2026-11-21T10:00:00.000Z",
  updated: "2026-11-21T10:05:00.000Z",
};
const none: ExpansionFlags = {
  invoiceIds: false,
  paymentStatus: false,
  paymentEvents: false,
  refundReason: false,
  instrumentNumber: false,
  allPaymentDetails: false,
};
const base = { object_type: "payment", object_id: "pmt_1", event: "payment.changed" };

describe("payloadFor", () => {
  it.each([
    [{}, {}],
    [{ invoiceIds: true }, { invoice_ids: ["inv_1", "inv_2"] }],
    [{ paymentStatus: true }, { payment_status: "settled" }],
    [{ paymentEvents: true }, { payment_events: payment.events }],
    [{ refundReason: true }, { refund_reason: null }],
    [{ instrumentNumber: true }, { instrument_number: "TRACE-9" }],
    [
      { invoiceIds: true, paymentStatus: true, instrumentNumber: true },
      { invoice_ids: ["inv_1", "inv_2"], payment_status: "settled", instrument_number: "TRACE-9" },
    ],
    [{ allPaymentDetails: true }, { object: payment }],
    [{ allPaymentDetails: true, paymentStatus: true, invoiceIds: true }, { object: payment }],
  ])("flags %j add %j", (flags, extra) => {
    expect(payloadFor(payment, { ...none, ...flags })).toEqual({ ...base, ...extra });
  });
});

describe("encodeBody", () => {
  const payload = { ...base, invoice_ids: ["inv_1", "inv_2"], payment_status: "settled", refund_reason: null, payment_events: payment.events };

  it("sends JSON as JSON", () => {
    expect(JSON.parse(encodeBody(payload, "application/json"))).toEqual(payload);
  });

  it("sends a form with repeated keys for string arrays and JSON text for objects", () => {
    const form = new URLSearchParams(encodeBody(payload, "application/x-www-form-urlencoded"));
    expect(form.get("object_type")).toBe("payment");
    expect(form.getAll("invoice_ids")).toEqual(["inv_1", "inv_2"]);
    expect(form.get("payment_status")).toBe("settled");
    expect(form.get("refund_reason")).toBe("");
    expect(JSON.parse(form.get("payment_events")!)).toEqual(payment.events);
    const whole = new URLSearchParams(encodeBody({ ...base, object: payment }, "application/x-www-form-urlencoded"));
    expect(JSON.parse(whole.get("object")!)).toEqual(payment);
  });
});
