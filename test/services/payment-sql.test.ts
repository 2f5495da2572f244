import { beforeAll, describe, expect, it } from "vitest";
import type { PaymentMethod } from "../../src/db/schema";
import { paymentView, type PaymentView } from "../../src/db/payment-detail";
import { call, insertInvoiceAt, makeCounterparty, makeTenant, shardD1, type User } from "../helpers/api";
import { newPayment } from "../helpers/lifecycle-oracle";

/**
 * A new payment is checked and written by SQL in one batch (src/services/payments/new-payment.ts).
 * The row, its first event, its invoice links and its stored detail (byte for byte) are what a new
 * payment's rules in plain TypeScript (test/helpers/lifecycle-oracle.ts) and db/payment-detail.ts's
 * `paymentView` make of the rows it was made from, for invoices of any text and created in any order.
 */
let client: User;
let buyer: { id: string };
let supplier: { id: string };
beforeAll(async () => {
  ({ client } = await makeTenant());
  buyer = await makeCounterparty(client, "buyer");
  supplier = await makeCounterparty(client, "supplier");
});

const NUMBERS = ["INV-1", 'INV "quoted" \\ \n\t\u0001 \u007f \u2028 ✓ 😀 </script>', "INV-\ud800-lone", "Ü-3"];

describe("a new payment's one batch, against the rules in plain TypeScript", () => {
  const orders: [string, string[]][] = [
    ["one invoice", ["2026-03-01T00:00:00.000Z"]],
    ["invoices named newest first", ["2026-03-03T00:00:00.000Z", "2026-03-02T00:00:00.000Z", "2026-03-01T00:00:00.000Z"]],
    [
      "invoices made in the same millisecond, and one before",
      ["2026-03-05T00:00:00.000Z", "2026-03-05T00:00:00.000Z", "2026-03-04T00:00:00.000Z", "2026-03-05T00:00:00.000Z"],
    ],
  ];
  it.each(orders)("%s", async (_label, createdAt) => {
    const ids: string[] = [];
    for (const [n, at] of createdAt.entries())
      ids.push(await insertInvoiceAt(client.accountId, buyer.id, supplier.id, at, `${NUMBERS[n % NUMBERS.length]} ${crypto.randomUUID()}`));
    const method: PaymentMethod = "wire";
    const res = await call("POST", "/v2/payments/", {
      headers: client.headers,
      body: { originating_counterparty_id: buyer.id, receiving_counterparty_id: supplier.id, invoice_ids: ids, payment_method: method },
    });
    expect(res.status).toBe(201);
    const db = await shardD1(client.accountId);
    const row = (await db.prepare("select * from payments where id = ?").bind(res.json.id).first<Record<string, unknown>>())!;
    const event = (await db.prepare("select * from payment_events where payment_id = ?").bind(res.json.id).first<Record<string, unknown>>())!;
    const invoiceRows = (
      await db
        .prepare(`select id, invoice_number, amount_cents, currency, created_at from invoices where id in (${ids.map(() => "?").join(",")})`)
        .bind(...ids)
        .all<Record<string, unknown>>()
    ).results;
    const byId = new Map(
      invoiceRows.map((r) => [
        r.id as string,
        {
          id: r.id as string,
          invoiceNumber: r.invoice_number as string,
          amountCents: r.amount_cents as number,
          currency: r.currency as string,
          createdAt: r.created_at as number,
        },
      ]),
    );
    const named = ids.map((id) => byId.get(id)!);
    const expected = newPayment(
      client.accountId,
      res.json.id,
      { originating_counterparty_id: buyer.id, receiving_counterparty_id: supplier.id, invoice_ids: ids, payment_method: method },
      named,
      { eventId: event.id as string, at: row.updated_at as number },
    );
    const oldestFirst = [...named].sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const view: PaymentView = paymentView(expected.payment, oldestFirst, [expected.event]);
    expect(row.detail).toBe(JSON.stringify(view));
    expect(res.json).toEqual(JSON.parse(JSON.stringify(view)));
    expect({ ...row, detail: undefined }).toEqual({
      id: expected.payment.id,
      account_id: expected.payment.accountId,
      originating_counterparty_id: expected.payment.originatingCounterpartyId,
      receiving_counterparty_id: expected.payment.receivingCounterpartyId,
      amount_cents: expected.payment.amountCents,
      currency: expected.payment.currency,
      payment_method: expected.payment.paymentMethod,
      status: "pending",
      instrument_number: null,
      refund_reason: null,
      version: 1,
      write_token: row.write_token,
      created_at: expected.payment.createdAt,
      updated_at: expected.payment.updatedAt,
      detail: undefined,
    });
    expect(event).toEqual({
      id: expected.event.id,
      payment_id: res.json.id,
      seq: 1,
      event_code: "PU00",
      status: "pending",
      description: "Payment created",
      instrument_number: null,
      refund_reason: null,
      created_at: expected.event.createdAt,
    });
    const links = (
      await db
        .prepare(
          "select invoice_id, released_by, payment_id, invoice_number, amount_cents, invoice_created_at from payment_invoices where payment_id = ? order by invoice_id",
        )
        .bind(res.json.id)
        .all()
    ).results;
    expect(links).toEqual(
      [...named]
        .sort((a, b) => (a.id < b.id ? -1 : 1))
        .map((invoice) => ({
          invoice_id: invoice.id,
          released_by: "",
          payment_id: res.json.id,
          invoice_number: invoice.invoiceNumber,
          amount_cents: invoice.amountCents,
          invoice_created_at: invoice.createdAt,
        })),
    );
  });
});
