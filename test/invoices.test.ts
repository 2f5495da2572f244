import { describe, expect, it } from "vitest";
import { BASE, call, ids, insertInvoiceAt, makeCounterparty, makeInvoice, makeTenant } from "./helpers/api";

async function parties() {
  const tenant = await makeTenant();
  const buyer = await makeCounterparty(tenant.client, "buyer");
  const supplier = await makeCounterparty(tenant.client, "supplier");
  return { ...tenant, buyer, supplier };
}

describe("invoices", () => {
  it("creates one with USD by default and shows it", async () => {
    const { client, buyer, supplier } = await parties();
    const res = await call("POST", "/v1/invoices/", {
      body: { invoice_number: "INV-1", buyer_id: buyer.id, supplier_id: supplier.id, amount_cents: 1250 },
      headers: client.headers,
    });
    expect(res.status).toBe(201);
    expect(res.json).toEqual({
      id: expect.stringMatching(/^inv_[A-Za-z0-9_-]{16,}$/),
      invoice_number: "INV-1",
      buyer_id: buyer.id,
      supplier_id: supplier.id,
      amount_cents: 1250,
      currency: "USD",
      created: expect.any(String),
      updated: expect.any(String),
    });
    expect((await call("GET", `/v1/invoices/${res.json.id}/`, { headers: client.headers })).json).toEqual({ ...res.json, payment_id: null });
  });

  it("says on its own page which payment covers it: none, then the payment, none once it failed, then the next", async () => {
    const { client, processor, buyer, supplier } = await parties();
    const invoice = await makeInvoice(client, buyer.id, supplier.id);
    const detail = async () => (await call("GET", `/v1/invoices/${invoice.id}/`, { headers: client.headers })).json;
    const pay = async () =>
      (
        await call("POST", "/v2/payments/", {
          body: { originating_counterparty_id: buyer.id, receiving_counterparty_id: supplier.id, invoice_ids: [invoice.id], payment_method: "ach" },
          headers: client.headers,
        })
      ).json;
    expect((await detail()).payment_id).toBeNull();
    const first = await pay();
    expect(await detail()).toEqual({ ...invoice, payment_id: first.id });
    await call("POST", `/v2/payments/${first.id}/events/`, {
      body: { event_code: "PU90", description: "Rejected", status: "failed" },
      headers: processor.headers,
    });
    expect((await detail()).payment_id).toBeNull();
    const second = await pay();
    expect((await detail()).payment_id).toBe(second.id);
    // The list keeps the published record.
    const listed = await call("GET", `/v1/invoices/?invoice_number=${invoice.invoice_number}`, { headers: client.headers });
    expect(listed.json.results).toEqual([invoice]);
    const stranger = await makeTenant();
    expect((await call("GET", `/v1/invoices/${invoice.id}/`, { headers: stranger.client.headers })).status).toBe(404);
  });

  it("takes another currency", async () => {
    const { client, buyer, supplier } = await parties();
    expect((await makeInvoice(client, buyer.id, supplier.id, { currency: "EUR" })).currency).toBe("EUR");
  });

  it.each([
    [{ amount_cents: 0 }, "amount_cents"],
    [{ amount_cents: -5 }, "amount_cents"],
    [{ amount_cents: 12.5 }, "amount_cents"],
    [{ amount_cents: "100" }, "amount_cents"],
    [{ amount_cents: 10_000_000_000_001 }, "amount_cents"],
    [{ currency: "usd" }, "currency"],
    [{ currency: "ABC" }, "currency"],
    [{ currency: "DOLLARS" }, "currency"],
    [{ invoice_number: "" }, "invoice_number"],
    [{ buyer_id: "cpty_missing" }, "buyer_id"],
    [{ supplier_id: "cpty_missing" }, "supplier_id"],
  ])("refuses %j naming the field", async (override, field) => {
    const { client, buyer, supplier } = await parties();
    const res = await call("POST", "/v1/invoices/", {
      body: { invoice_number: "INV-1", buyer_id: buyer.id, supplier_id: supplier.id, amount_cents: 100, ...override },
      headers: client.headers,
    });
    expect(res.status).toBe(400);
    expect(Object.keys(res.json)).toEqual([field]);
  });

  it("refuses counterparties of the wrong type", async () => {
    const { client, buyer, supplier } = await parties();
    const res = await call("POST", "/v1/invoices/", {
      body: { invoice_number: "INV-1", buyer_id: supplier.id, supplier_id: buyer.id, amount_cents: 100 },
      headers: client.headers,
    });
    expect(res.status).toBe(400);
    expect(Object.keys(res.json).sort()).toEqual(["buyer_id", "supplier_id"]);
  });

  it("refuses another account's counterparties as if missing", async () => {
    const { client, buyer } = await parties();
    const other = await parties();
    const res = await call("POST", "/v1/invoices/", {
      body: { invoice_number: "INV-1", buyer_id: buyer.id, supplier_id: other.supplier.id, amount_cents: 100 },
      headers: client.headers,
    });
    expect(res.status).toBe(400);
    expect(res.json.supplier_id[0]).toMatch(/does not exist/);
  });

  it("filters by invoice_number, repeated values OR-ed", async () => {
    const { client, buyer, supplier } = await parties();
    const a = await makeInvoice(client, buyer.id, supplier.id, { invoice_number: "A" });
    const b = await makeInvoice(client, buyer.id, supplier.id, { invoice_number: "B" });
    await makeInvoice(client, buyer.id, supplier.id, { invoice_number: "C" });
    const a2 = await makeInvoice(client, buyer.id, supplier.id, { invoice_number: "A" });
    const one = await call("GET", "/v1/invoices/?invoice_number=A", { headers: client.headers });
    expect(ids(one)).toEqual([a.id, a2.id]);
    expect(one.json.count).toBe(2);
    expect(ids(await call("GET", "/v1/invoices/?invoice_number=A&invoice_number=B", { headers: client.headers }))).toEqual([a.id, b.id, a2.id]);
  });

  describe("created filters are exact at the boundary", () => {
    // Rows at .122, .123 and .124 ms.
    async function fixture() {
      const p = await parties();
      const at = (iso: string) => insertInvoiceAt(p.account.id, p.buyer.id, p.supplier.id, iso);
      const before = await at("2026-11-21T10:15:30.122Z");
      const exact = await at("2026-11-21T10:15:30.123Z");
      const after = await at("2026-11-21T10:15:30.124Z");
      return { ...p, before, exact, after };
    }
    const get = (client: { headers: Record<string, string> }, query: string) => call("GET", `/v1/invoices/?${query}`, { headers: client.headers });

    it.each([
      ["created__gte=2026-11-21T10:15:30.123Z", ["exact", "after"]],
      ["created__gt=2026-11-21T10:15:30.123Z", ["after"]],
      ["created__lte=2026-11-21T10:15:30.123Z", ["before", "exact"]],
      ["created__lt=2026-11-21T10:15:30.123Z", ["before"]],
      ["created__gte=2026-11-21T10:15:30.1234Z", ["after"]],
      ["created__gte=2026-11-21T10:15:30.123000Z", ["exact", "after"]],
      ["created__gte=2026-11-21T10:15:30.123000001Z", ["after"]],
      ["created__gt=2026-11-21T10:15:30.122999999Z", ["exact", "after"]],
      ["created__lte=2026-11-21T10:15:30.123456Z", ["before", "exact"]],
      ["created__lt=2026-11-21T10:15:30.123001Z", ["before", "exact"]],
      ["created__gte=2026-11-21T10:15:30.123", ["exact", "after"]],
      ["created__gte=2026-11-21T11:15:30.123%2B01:00", ["exact", "after"]],
      ["created__gte=2026-11-21T11:15:30.123+01:00", ["exact", "after"]],
      ["created__lt=2026-11-21T05:15:30.1235-05:00", ["before", "exact"]],
      ["created__gte=2026-11-21", ["before", "exact", "after"]],
      ["created__lt=2026-11-21", []],
      ["created__gte=2026-11-22", []],
      ["created__gt=2026-11-21T10:15:30.122Z&created__lt=2026-11-21T10:15:30.124Z", ["exact"]],
    ])("%s", async (query, expected) => {
      const f = await fixture();
      const res = await get(f.client, query);
      expect(res.status).toBe(200);
      const names = { [f.before]: "before", [f.exact]: "exact", [f.after]: "after" } as Record<string, string>;
      expect(ids(res).map((id) => names[id])).toEqual(expected);
      expect(res.json.count).toBe(expected.length);
    });

    it.each(["created__gt", "created__gte", "created__lt", "created__lte"])("refuses a bad %s", async (name) => {
      const f = await parties();
      for (const bad of ["yesterday", "2026-02-30", "2026-11-21T25:00", "0000-01-01"]) {
        const res = await get(f.client, `${name}=${encodeURIComponent(bad)}`);
        expect(res.status).toBe(400);
        expect(res.json).toEqual({ [name]: ["Enter a valid date/time."] });
      }
    });

    it("combines created and invoice_number", async () => {
      const p = await parties();
      const x = await insertInvoiceAt(p.account.id, p.buyer.id, p.supplier.id, "2026-11-01T00:00:00Z", "X");
      await insertInvoiceAt(p.account.id, p.buyer.id, p.supplier.id, "2026-10-01T00:00:00Z", "X");
      await insertInvoiceAt(p.account.id, p.buyer.id, p.supplier.id, "2026-11-02T00:00:00Z", "Y");
      expect(ids(await get(p.client, "invoice_number=X&created__gte=2026-10-15"))).toEqual([x]);
    });
  });
});

describe("a repeated filter read value by value", () => {
  it("pages through the merged values in order, forwards and back", async () => {
    const { client } = await makeTenant();
    const buyer = await makeCounterparty(client, "buyer");
    const supplier = await makeCounterparty(client, "supplier");
    const made: string[] = [];
    for (let i = 0; i < 7; i++) made.push((await makeInvoice(client, buyer.id, supplier.id, { invoice_number: ["A", "B", "C"][i % 3] })).id);
    const wanted = made.filter((_, i) => i % 3 !== 2); // numbers A and B, in created order
    const seen: string[] = [];
    let res = await call("GET", "/v1/invoices/?invoice_number=A&invoice_number=B&page_size=2", { headers: client.headers });
    const pages = [res];
    for (;;) {
      expect(res.json.count).toBe(wanted.length);
      seen.push(...ids(res));
      if (!res.json.next) break;
      res = await call("GET", res.json.next.slice(BASE.length), { headers: client.headers });
      pages.push(res);
    }
    expect(seen).toEqual(wanted);
    const back = await call("GET", pages.at(-1)!.json.previous.slice(BASE.length), { headers: client.headers });
    expect(ids(back)).toEqual(ids(pages.at(-2)!));
    const byOffset = await call("GET", "/v1/invoices/?invoice_number=A&invoice_number=B&page_size=2&page=2", { headers: client.headers });
    expect(ids(byOffset)).toEqual(wanted.slice(2, 4));
  });
});
