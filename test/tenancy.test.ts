import { describe, expect, it } from "vitest";
import { call, ids, makePayment, makeTenant } from "./helpers/api";

/** Account B's objects, seen by account A's users. */
async function twoTenants() {
  const a = await makeTenant();
  const b = await makeTenant();
  const mine = await makePayment(a.client);
  const theirs = await makePayment(b.client);
  return { a, b, mine, theirs };
}

describe("tenancy", () => {
  it("answers 404 for another account's objects on every detail path", async () => {
    const { a, theirs } = await twoTenants();
    for (const path of [
      `/v1/counterparties/${theirs.buyer.id}/`,
      `/v1/counterparties/${theirs.supplier.id}`,
      `/v1/invoices/${theirs.invoice.id}/`,
      `/v2/payments/${theirs.payment.id}/`,
      `/v2/payments/pmt_${"x".repeat(500)}/`,
    ]) {
      const res = await call("GET", path, { headers: a.client.headers });
      expect(res.status, path).toBe(404);
      expect(res.json).toEqual({ detail: "Not found." });
    }
  });

  it("answers 404 for another account's objects on every write path, and changes nothing", async () => {
    const { a, b, theirs } = await twoTenants();
    const patch = await call("PATCH", `/v1/counterparties/${theirs.buyer.id}/`, { body: { name: "hijacked" }, headers: a.client.headers });
    expect(patch.status).toBe(404);
    const event = await call("POST", `/v2/payments/${theirs.payment.id}/events/`, {
      body: { event_code: "X", description: "x", status: "canceled" },
      headers: a.processor.headers,
    });
    expect(event.status).toBe(404);
    const cp = await call("GET", `/v1/counterparties/${theirs.buyer.id}/`, { headers: b.client.headers });
    expect(cp.json.name).toBe(theirs.buyer.name);
    const pmt = await call("GET", `/v2/payments/${theirs.payment.id}/`, { headers: b.client.headers });
    expect(pmt.json.status).toBe("pending");
    expect(pmt.json.events).toHaveLength(1);
  });

  it("does not let another account's counterparties or invoices into a write", async () => {
    const { a, mine, theirs } = await twoTenants();
    const invoice = await call("POST", "/v1/invoices/", {
      body: { invoice_number: "X", buyer_id: theirs.buyer.id, supplier_id: mine.supplier.id, amount_cents: 1 },
      headers: a.client.headers,
    });
    expect(invoice.status).toBe(400);
    expect(Object.keys(invoice.json)).toEqual(["buyer_id"]);
    const payment = await call("POST", "/v2/payments/", {
      body: {
        originating_counterparty_id: mine.buyer.id,
        receiving_counterparty_id: mine.supplier.id,
        invoice_ids: [theirs.invoice.id],
        payment_method: "ach",
      },
      headers: a.client.headers,
    });
    expect(payment.status).toBe(400);
    expect(payment.json.invoice_ids[0]).toMatch(/does not exist/);
  });

  it("never lists another account's objects, even when filtered by their ids", async () => {
    const { a, mine, theirs } = await twoTenants();
    const cps = await call("GET", `/v1/counterparties/?internal_id=${theirs.buyer.internal_id}&internal_id=${mine.buyer.internal_id}`, {
      headers: a.client.headers,
    });
    expect(ids(cps)).toEqual([mine.buyer.id]);
    expect(ids(await call("GET", "/v1/counterparties/", { headers: a.client.headers }))).toEqual([mine.buyer.id, mine.supplier.id]);
    const invoices = await call("GET", `/v1/invoices/?invoice_number=${theirs.invoice.invoice_number}`, { headers: a.client.headers });
    expect(invoices.json).toMatchObject({ count: 0, results: [] });
    expect(ids(await call("GET", "/v1/invoices/", { headers: a.client.headers }))).toEqual([mine.invoice.id]);
    const payments = await call("GET", `/v2/payments/?originating_counterparty_id=${theirs.buyer.id}`, { headers: a.client.headers });
    expect(payments.json).toMatchObject({ count: 0, results: [] });
    const all = await call("GET", "/v2/payments/", { headers: a.client.headers });
    expect(ids(all)).toEqual([mine.payment.id]);
    expect(all.json.count).toBe(1);
  });
});
