import { beforeAll, describe, expect, it } from "vitest";
import { PAYMENT_STATUSES, type PaymentStatus } from "../../src/db/schema";
import { detailAfter, type PaymentView } from "../../src/db/payment-detail";
import { applyEvent, MAX_EVENTS, type PaymentEventFields, type PaymentRow } from "../../src/services/payments/lifecycle";
import { call, makeCounterparty, makePayment, makeTenant, shardD1, type User } from "../helpers/api";

/**
 * An event is decided and written by SQL in one batch (src/services/payments/event-write.ts). For
 * every status and every kind of event, the payment row, its stored detail (byte for byte) and the
 * event row it leaves are what the lifecycle's rules in plain TypeScript say (lifecycle.ts
 * `applyEvent`, db/payment-detail.ts `detailAfter`), and a refused event is their 409 and changes nothing.
 */
let client: User;
let processor: User;
let parties: { buyer: unknown; supplier: unknown };
beforeAll(async () => {
  ({ client, processor } = await makeTenant());
  parties = { buyer: await makeCounterparty(client, "buyer"), supplier: await makeCounterparty(client, "supplier") };
});

type Row = PaymentRow & { writeToken: string; detail: string };

/** A payment of the account put in `status` at `version`, with an instrument (and a refund reason when refunded). */
async function paymentIn(status: PaymentStatus, version = 3): Promise<{ db: D1Database; row: Row }> {
  const { payment } = await makePayment(client, parties as never);
  const db = await shardD1(client.accountId);
  const shown = (await db.prepare("select detail from payments where id = ?").bind(payment.id).first<{ detail: string }>())!;
  const refundReason = status === "refunded" ? "Paid twice" : null;
  const detail = JSON.stringify({ ...(JSON.parse(shown.detail) as PaymentView), status, instrument_number: "TRACE-1", refund_reason: refundReason, version });
  await db
    .prepare("update payments set status = ?, version = ?, instrument_number = 'TRACE-1', refund_reason = ?, detail = ? where id = ?")
    .bind(status, version, refundReason, detail, payment.id)
    .run();
  return { db, row: await readRow(db, payment.id) };
}

async function readRow(db: D1Database, id: string): Promise<Row> {
  const r = (await db.prepare("select * from payments where id = ?").bind(id).first<Record<string, unknown>>())!;
  return {
    id: r.id as string,
    accountId: r.account_id as string,
    originatingCounterpartyId: r.originating_counterparty_id as string,
    receivingCounterpartyId: r.receiving_counterparty_id as string,
    amountCents: r.amount_cents as number,
    currency: r.currency as string,
    paymentMethod: r.payment_method as PaymentRow["paymentMethod"],
    status: r.status as PaymentStatus,
    instrumentNumber: r.instrument_number as string | null,
    refundReason: r.refund_reason as string | null,
    version: r.version as number,
    writeToken: r.write_token as string,
    createdAt: r.created_at as number,
    updatedAt: r.updated_at as number,
    detail: r.detail as string,
  };
}

/** Records `input` through the API and checks everything it left against the oracle. */
async function checked(status: PaymentStatus, input: PaymentEventFields, version = 3) {
  const { db, row: before } = await paymentIn(status, version);
  const res = await call("POST", `/v2/payments/${before.id}/events/`, { headers: processor.headers, body: input });
  const after = await readRow(db, before.id);
  const { detail: shown, writeToken: _before, ...payment } = before;
  let expected: ReturnType<typeof applyEvent> | null = null;
  let refusal: unknown = null;
  try {
    expected = applyEvent(payment, input, { eventId: res.json?.id, at: Date.parse(res.json?.created) });
  } catch (error) {
    refusal = error;
  }
  if (!expected) {
    expect([res.status, res.json]).toEqual([409, { detail: (refusal as Error).message }]);
    expect(after).toEqual(before);
    return;
  }
  expect(res.status).toBe(201);
  const { writeToken: _after, detail, ...rowAfter } = after;
  expect(rowAfter).toEqual(expected.next);
  expect(detail).toBe(JSON.stringify(detailAfter(JSON.parse(shown) as PaymentView, input, expected.event, expected.next.version)));
  const event = await db.prepare("select * from payment_events where id = ?").bind(res.json.id).first<Record<string, unknown>>();
  expect(event).toEqual({
    id: expected.event.id,
    payment_id: expected.event.paymentId,
    seq: expected.event.seq,
    event_code: expected.event.eventCode,
    status: expected.event.status,
    description: expected.event.description,
    instrument_number: expected.event.instrumentNumber,
    refund_reason: expected.event.refundReason,
    created_at: expected.event.createdAt,
  });
  expect(res.json).toEqual({
    id: expected.event.id,
    event_code: input.event_code,
    status: expected.event.status,
    description: input.description,
    created: res.json.created,
  });
}

describe("an event's one batch, against the lifecycle's rules", () => {
  const statusless: [string, Omit<PaymentEventFields, "event_code" | "description">][] = [
    ["names nothing", {}],
    ["sets instrument_number", { instrument_number: 'TRACE-2 "quoted" \n ✓' }],
    ["clears instrument_number", { instrument_number: null }],
  ];
  const withoutStatus = PAYMENT_STATUSES.flatMap((status) => statusless.map(([label, input]) => [status, label, input] as const));
  it.each(withoutStatus)("on a %s payment, an event that %s", (status, _label, input) =>
    checked(status, { event_code: "PU15", description: "note \u0001 \u2028 </script>", ...input }),
  );

  const pairs = PAYMENT_STATUSES.flatMap((from) => PAYMENT_STATUSES.map((to) => [from, to] as const));
  it.each(pairs)("%s -> %s", (from, to) =>
    checked(from, { event_code: "PX", description: "move", status: to, ...(to === "refunded" ? { refund_reason: "Returned goods" } : {}) }),
  );

  it.each([MAX_EVENTS - 1, MAX_EVENTS, MAX_EVENTS + 3])("on a payment at version %i", (version) =>
    checked("in-progress", { event_code: "PU15", description: "note" }, version),
  );

  it("answers 404 for a payment the account does not have, and writes nothing", async () => {
    const res = await call("POST", "/v2/payments/pmt_nothing/events/", { headers: processor.headers, body: { event_code: "PU15", description: "note" } });
    expect([res.status, res.json]).toEqual([404, { detail: "Not found." }]);
  });
});
