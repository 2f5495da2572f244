import { describe, expect, it } from "vitest";
import { PAYMENT_STATUSES, type PaymentStatus } from "../../src/db/schema";
import { AppError } from "../../src/errors";
import { applyEvent, type PaymentEventInput } from "../../src/services/payments/lifecycle";
import { canMove } from "../../src/services/payments/status";
import type { PaymentRow } from "../../src/services/payments/view";

const stamp = { eventId: "pev_next", writeToken: "token-next", at: 2_000 };

function paymentIn(status: PaymentStatus): PaymentRow {
  return {
    id: "pmt_1",
    accountId: "acct_1",
    originatingCounterpartyId: "cpty_b",
    receivingCounterpartyId: "cpty_s",
    amountCents: 1250,
    currency: "EUR",
    paymentMethod: "wire",
    status,
    instrumentNumber: "TRACE-1",
    refundReason: status === "refunded" ? "Paid twice" : null,
    version: 3,
    writeToken: "token-now",
    createdAt: 1_000,
    updatedAt: 1_500,
  };
}

// Every event that names no status, on a payment in every status: only what the event names changes.
const statusless: [string, Omit<PaymentEventInput, "event_code" | "description">, Partial<PaymentRow>][] = [
  ["names nothing", {}, {}],
  ["sets instrument_number", { instrument_number: "TRACE-2" }, { instrumentNumber: "TRACE-2" }],
  ["clears instrument_number", { instrument_number: null }, { instrumentNumber: null }],
];

describe("applyEvent without a status", () => {
  const cases = PAYMENT_STATUSES.flatMap((status) => statusless.map(([label, input, changed]) => [status, label, input, changed] as const));
  it.each(cases)("on a %s payment, an event that %s keeps every other field", (status, _label, input, changed) => {
    const payment = paymentIn(status);
    const { next, event } = applyEvent(payment, { event_code: "PU15", description: "note", ...input }, stamp);
    expect(next).toEqual({ ...payment, ...changed, version: 4, writeToken: "token-next", updatedAt: 2_000 });
    expect(event).toEqual({ id: "pev_next", paymentId: "pmt_1", seq: 4, eventCode: "PU15", status, description: "note", createdAt: 2_000 });
  });
});

describe("applyEvent with a status", () => {
  const pairs = PAYMENT_STATUSES.flatMap((from) => PAYMENT_STATUSES.map((to) => [from, to] as const));
  it.each(pairs)("%s -> %s", (from, to) => {
    const payment = paymentIn(from);
    const input: PaymentEventInput = { event_code: "PX", description: "move", status: to, ...(to === "refunded" ? { refund_reason: "Returned goods" } : {}) };
    if (!canMove(from, to)) {
      expect(() => applyEvent(payment, input, stamp)).toThrow(AppError);
      return;
    }
    const { next, event } = applyEvent(payment, input, stamp);
    expect(next).toEqual({
      ...payment,
      status: to,
      refundReason: to === "refunded" ? "Returned goods" : payment.refundReason,
      version: 4,
      writeToken: "token-next",
      updatedAt: 2_000,
    });
    expect(event.status).toBe(to);
  });
});
