import { describe, expect, it } from "vitest";
import { PAYMENT_STATUSES, type PaymentStatus } from "../../src/db/schema";
import { AppError } from "../../src/errors";
import { detailAfter, paymentView } from "../../src/db/payment-detail";
import { applyEvent, canMove, MAX_EVENTS, type EventRow, type PaymentEventFields, type PaymentRow } from "../../src/services/payments/lifecycle";

// The lifecycle's statement in TypeScript, which the event's SQL is checked against
// (test/services/event-write.test.ts), checked here on its own.
const stamp = { eventId: "pev_next", at: 2_000 };

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
    createdAt: 1_000,
    updatedAt: 1_500,
  };
}

// Every event that names no status, on a payment in every status: only what the event names changes.
const statusless: [string, Omit<PaymentEventFields, "event_code" | "description">, Partial<PaymentRow>][] = [
  ["names nothing", {}, {}],
  ["sets instrument_number", { instrument_number: "TRACE-2" }, { instrumentNumber: "TRACE-2" }],
  ["clears instrument_number", { instrument_number: null }, { instrumentNumber: null }],
];

describe("applyEvent without a status", () => {
  const cases = PAYMENT_STATUSES.flatMap((status) => statusless.map(([label, input, changed]) => [status, label, input, changed] as const));
  it.each(cases)("on a %s payment, an event that %s keeps every other field", (status, _label, input, changed) => {
    const payment = paymentIn(status);
    const { next, event } = applyEvent(payment, { event_code: "PU15", description: "note", ...input }, stamp);
    expect(next).toEqual({ ...payment, ...changed, version: 4, updatedAt: 2_000 });
    // The event keeps what it left: the status, instrument number and refund reason after it.
    expect(event).toEqual({
      id: "pev_next",
      paymentId: "pmt_1",
      seq: 4,
      eventCode: "PU15",
      status,
      description: "note",
      instrumentNumber: next.instrumentNumber,
      refundReason: next.refundReason,
      createdAt: 2_000,
    });
  });
});

describe("applyEvent with a status", () => {
  const pairs = PAYMENT_STATUSES.flatMap((from) => PAYMENT_STATUSES.map((to) => [from, to] as const));
  it.each(pairs)("%s -> %s", (from, to) => {
    const payment = paymentIn(from);
    const input: PaymentEventFields = { event_code: "PX", description: "move", status: to, ...(to === "refunded" ? { refund_reason: "Returned goods" } : {}) };
    if (!canMove(from, to)) {
      expect(() => applyEvent(payment, input, stamp)).toThrow(AppError);
      return;
    }
    const { next, event } = applyEvent(payment, input, stamp);
    expect(next).toEqual({ ...payment, status: to, refundReason: to === "refunded" ? "Returned goods" : payment.refundReason, version: 4, updatedAt: 2_000 });
    expect(event.status).toBe(to);
  });
});

describe("applyEvent past the cap", () => {
  it.each([
    [MAX_EVENTS - 2, true],
    [MAX_EVENTS - 1, true],
    [MAX_EVENTS, false],
    [MAX_EVENTS + 5, false],
  ])("on a payment with %i events, an event is accepted: %s", (events, accepted) => {
    const payment = { ...paymentIn("in-progress"), version: events };
    const input = { event_code: "PU15", description: "note" };
    if (accepted) {
      expect(applyEvent(payment, input, stamp).event.seq).toBe(events + 1);
      return;
    }
    const thrown = (() => {
      try {
        applyEvent(payment, input, stamp);
      } catch (error) {
        return error;
      }
    })();
    expect(thrown).toBeInstanceOf(AppError);
    expect((thrown as AppError).status).toBe(409);
    expect((thrown as AppError).message).toBe(`A payment has at most ${MAX_EVENTS} events.`);
  });
});

// A write builds the new detail from the stored one; it must be, to the byte, what the rows give.
describe("detailAfter", () => {
  const invoices = [
    { id: "inv_a", invoiceNumber: "A-1", amountCents: 1000, createdAt: 10 },
    { id: "inv_b", invoiceNumber: 'B-"2"\n', amountCents: 250, createdAt: 20 },
  ];
  const earlier: EventRow[] = [
    {
      id: "pev_1",
      paymentId: "pmt_1",
      seq: 1,
      eventCode: "PU00",
      status: "pending",
      description: "Payment created",
      instrumentNumber: null,
      refundReason: null,
      createdAt: 1_000,
    },
    {
      id: "pev_2",
      paymentId: "pmt_1",
      seq: 2,
      eventCode: "PU10",
      status: "in-progress",
      description: "Sent",
      instrumentNumber: "ACH-1",
      refundReason: null,
      createdAt: 1_200,
    },
    {
      id: "pev_3",
      paymentId: "pmt_1",
      seq: 3,
      eventCode: "PU20",
      status: "settled",
      description: "Paid ✓",
      instrumentNumber: "ACH-1",
      refundReason: null,
      createdAt: 1_500,
    },
  ];
  const inputs: [string, PaymentEventFields][] = [
    ["a note", { event_code: "PU15", description: "note" }],
    ["a new instrument", { event_code: "PU16", description: "trace", instrument_number: "TRACE-9" }],
    ["a cleared instrument", { event_code: "PU17", description: "cleared", instrument_number: null }],
    ["a refund", { event_code: "PU30", description: "refund", status: "refunded", refund_reason: "Paid twice" }],
  ];
  it.each(inputs)("after %s, equals the detail of the rows", (_label, input) => {
    const payment = { ...paymentIn("settled"), refundReason: null };
    const { next, event } = applyEvent(payment, input, stamp);
    const shown = paymentView(payment, invoices, earlier);
    expect(JSON.stringify(detailAfter(shown, input, event, next.version))).toBe(JSON.stringify(paymentView(next, invoices, [...earlier, event])));
  });
});
