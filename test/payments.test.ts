import { describe, expect, it } from "vitest";
import { MAX_EVENTS } from "../src/services/payments/lifecycle";
import { call, ids, insertInvoiceAt, makeCounterparty, makeInvoice, makePayment, makeTenant, shardD1, writtenByTable, type User } from "./helpers/api";

async function parties() {
  const tenant = await makeTenant();
  const buyer = await makeCounterparty(tenant.client, "buyer");
  const supplier = await makeCounterparty(tenant.client, "supplier");
  return { ...tenant, buyer, supplier };
}

const pay = (user: User, body: Record<string, unknown>) => call("POST", "/v2/payments/", { body, headers: user.headers });
const event = (user: User, paymentId: string, body: Record<string, unknown>) =>
  call("POST", `/v2/payments/${paymentId}/events/`, { body, headers: user.headers });

describe("creating a payment", () => {
  it("sums its invoices and starts pending with one PU00 event", async () => {
    const { client, buyer, supplier } = await parties();
    const i1 = await makeInvoice(client, buyer.id, supplier.id, { amount_cents: 1000 });
    const i2 = await makeInvoice(client, buyer.id, supplier.id, { amount_cents: 250 });
    const res = await pay(client, {
      originating_counterparty_id: buyer.id,
      receiving_counterparty_id: supplier.id,
      invoice_ids: [i1.id, i2.id],
      payment_method: "check",
    });
    expect(res.status).toBe(201);
    expect(res.json).toEqual({
      id: expect.stringMatching(/^pmt_[A-Za-z0-9_-]{16,}$/),
      originating_counterparty_id: buyer.id,
      receiving_counterparty_id: supplier.id,
      invoices: [
        { id: i1.id, invoice_number: i1.invoice_number, amount_cents: 1000 },
        { id: i2.id, invoice_number: i2.invoice_number, amount_cents: 250 },
      ],
      amount_cents: 1250,
      currency: "USD",
      payment_method: "check",
      status: "pending",
      instrument_number: null,
      events: [
        {
          id: expect.stringMatching(/^pev_[A-Za-z0-9_-]{16,}$/),
          event_code: "PU00",
          status: "pending",
          description: "Payment created",
          created: res.json.created,
        },
      ],
      refund_reason: null,
      version: 1,
      created: expect.stringMatching(/\.\d{3}Z$/),
      updated: res.json.created,
    });
    expect((await call("GET", `/v2/payments/${res.json.id}/`, { headers: client.headers })).json).toEqual(res.json);
  });

  it("lists its invoices oldest first, in its answer and after every later event", async () => {
    const { account, client, processor, buyer, supplier } = await parties();
    const newer = await insertInvoiceAt(account.id, buyer.id, supplier.id, "2026-03-02T00:00:00.000Z");
    const older = await insertInvoiceAt(account.id, buyer.id, supplier.id, "2026-03-01T00:00:00.000Z");
    const res = await pay(client, {
      originating_counterparty_id: buyer.id,
      receiving_counterparty_id: supplier.id,
      invoice_ids: [newer, older],
      payment_method: "ach",
    });
    expect(res.status).toBe(201);
    expect(res.json.invoices.map((row: { id: string }) => row.id)).toEqual([older, newer]);
    expect((await event(processor, res.json.id, { event_code: "PU15", description: "note" })).status).toBe(201);
    const detail = await call("GET", `/v2/payments/${res.json.id}/`, { headers: client.headers });
    expect(detail.json.invoices).toEqual(res.json.invoices);
  });

  it.each([
    [{ payment_method: "cash" }, "payment_method"],
    [{ invoice_ids: [] }, "invoice_ids"],
    [{ invoice_ids: "inv_x" }, "invoice_ids"],
    [{ invoice_ids: ["inv_missing"] }, "invoice_ids"],
    [{ originating_counterparty_id: "cpty_missing" }, "originating_counterparty_id"],
    [{ receiving_counterparty_id: "cpty_missing" }, "receiving_counterparty_id"],
  ])("refuses %j naming the field", async (override, field) => {
    const { client, buyer, supplier } = await parties();
    const invoice = await makeInvoice(client, buyer.id, supplier.id);
    const res = await pay(client, {
      originating_counterparty_id: buyer.id,
      receiving_counterparty_id: supplier.id,
      invoice_ids: [invoice.id],
      payment_method: "ach",
      ...override,
    });
    expect(res.status).toBe(400);
    expect(res.json[field]).toEqual(expect.arrayContaining([expect.any(String)]));
  });

  it("refuses swapped counterparty roles", async () => {
    const { client, buyer, supplier } = await parties();
    const invoice = await makeInvoice(client, buyer.id, supplier.id);
    const res = await pay(client, {
      originating_counterparty_id: supplier.id,
      receiving_counterparty_id: buyer.id,
      invoice_ids: [invoice.id],
      payment_method: "ach",
    });
    expect(res.status).toBe(400);
    expect(Object.keys(res.json).sort()).toEqual(["invoice_ids", "originating_counterparty_id", "receiving_counterparty_id"]);
  });

  it("refuses invoices of another buyer or supplier", async () => {
    const { client, buyer, supplier } = await parties();
    const otherSupplier = await makeCounterparty(client, "supplier");
    const mine = await makeInvoice(client, buyer.id, supplier.id);
    const theirs = await makeInvoice(client, buyer.id, otherSupplier.id);
    const res = await pay(client, {
      originating_counterparty_id: buyer.id,
      receiving_counterparty_id: supplier.id,
      invoice_ids: [mine.id, theirs.id],
      payment_method: "ach",
    });
    expect(res.status).toBe(400);
    expect(res.json.invoice_ids).toEqual([expect.stringContaining(theirs.id)]);
  });

  it("refuses mixed currencies and repeated invoices", async () => {
    const { client, buyer, supplier } = await parties();
    const usd = await makeInvoice(client, buyer.id, supplier.id);
    const eur = await makeInvoice(client, buyer.id, supplier.id, { currency: "EUR" });
    const base = { originating_counterparty_id: buyer.id, receiving_counterparty_id: supplier.id, payment_method: "ach" };
    const mixed = await pay(client, { ...base, invoice_ids: [usd.id, eur.id] });
    expect(mixed.status).toBe(400);
    expect(mixed.json.invoice_ids[0]).toMatch(/currency/);
    const twice = await pay(client, { ...base, invoice_ids: [usd.id, usd.id] });
    expect(twice.status).toBe(400);
    expect(Object.keys(twice.json)).toEqual(["invoice_ids"]);
  });

  it("answers 409 for an invoice already in a live payment, and frees it when that payment fails", async () => {
    const { client, processor, buyer, supplier } = await parties();
    const invoice = await makeInvoice(client, buyer.id, supplier.id);
    const body = { originating_counterparty_id: buyer.id, receiving_counterparty_id: supplier.id, invoice_ids: [invoice.id], payment_method: "ach" };
    const first = await pay(client, body);
    expect(first.status).toBe(201);
    const second = await pay(client, body);
    expect(second.status).toBe(409);
    expect(second.json.detail).toContain(invoice.id);
    expect((await event(processor, first.json.id, { event_code: "PU90", description: "Bank rejected", status: "failed" })).status).toBe(201);
    expect((await pay(client, body)).status).toBe(201);
    expect((await pay(client, body)).status).toBe(409);
  });

  it("links an invoice in one row, and lets it go in a failure that keeps it in the payment's detail, however many times", async () => {
    const { client, processor, buyer, supplier } = await parties();
    const invoice = await makeInvoice(client, buyer.id, supplier.id);
    const body = { originating_counterparty_id: buyer.id, receiving_counterparty_id: supplier.id, invoice_ids: [invoice.id], payment_method: "ach" };
    const bindings = { SERVER_TIMING: "true" };
    const failed: string[] = [];
    for (let i = 0; i < 2; i++) {
      const made = await call("POST", "/v2/payments/", { body, headers: client.headers, bindings });
      expect(made.status).toBe(201);
      expect(writtenByTable(made).payment_invoices).toBe(1);
      const fail = await call("POST", `/v2/payments/${made.json.id}/events/`, {
        body: { event_code: "PU90", description: "Bank rejected", status: "failed" },
        headers: processor.headers,
        bindings,
      });
      expect(fail.status).toBe(201);
      failed.push(made.json.id);
    }
    const third = await pay(client, body);
    expect(third.status).toBe(201);
    expect((await pay(client, body)).status).toBe(409);
    for (const id of [...failed, third.json.id]) {
      const detail = await call("GET", `/v2/payments/${id}/`, { headers: client.headers });
      expect(detail.json.invoices.map((row: { id: string }) => row.id)).toEqual([invoice.id]);
    }
  });

  it("lets only one of several concurrent payments take an invoice", async () => {
    const { client, buyer, supplier } = await parties();
    const invoice = await makeInvoice(client, buyer.id, supplier.id);
    const body = { originating_counterparty_id: buyer.id, receiving_counterparty_id: supplier.id, invoice_ids: [invoice.id], payment_method: "ach" };
    const results = await Promise.all(Array.from({ length: 6 }, () => pay(client, body)));
    expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409, 409]);
    const list = await call("GET", "/v2/payments/", { headers: client.headers });
    expect(list.json.count).toBe(1);
  });

  it("takes 100 invoices in one payment (D1 allows 100 bound parameters a statement)", async () => {
    const { client, account, buyer, supplier } = await parties();
    const ids: string[] = [];
    for (let i = 0; i < 100; i++) ids.push(await insertInvoiceAt(account.id, buyer.id, supplier.id, new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString()));
    const res = await pay(client, { originating_counterparty_id: buyer.id, receiving_counterparty_id: supplier.id, invoice_ids: ids, payment_method: "wire" });
    expect(res.status).toBe(201);
    expect(res.json.invoices).toHaveLength(100);
    expect(res.json.amount_cents).toBe(100 * 100);
    const tooMany = await pay(client, {
      originating_counterparty_id: buyer.id,
      receiving_counterparty_id: supplier.id,
      invoice_ids: [...ids, "inv_x"],
      payment_method: "wire",
    });
    expect(tooMany.status).toBe(400);
    expect(Object.keys(tooMany.json)).toEqual(["invoice_ids"]);
  });

  it("writes nothing when it is refused", async () => {
    const { client, account, buyer, supplier } = await parties();
    const invoice = await makeInvoice(client, buyer.id, supplier.id);
    await pay(client, {
      originating_counterparty_id: buyer.id,
      receiving_counterparty_id: supplier.id,
      invoice_ids: [invoice.id, "inv_missing"],
      payment_method: "ach",
    });
    const rows = await (await shardD1(account.id)).prepare("select count(*) as n from payments where account_id = ?").bind(account.id).first<{ n: number }>();
    expect(rows!.n).toBe(0);
  });
});

describe("the status lifecycle through the API", () => {
  const paths: [string, string[]][] = [
    ["pending -> in-progress -> settled -> refunded", ["in-progress", "settled", "refunded"]],
    ["pending -> canceled", ["canceled"]],
    ["pending -> failed", ["failed"]],
    ["pending -> in-progress -> canceled", ["in-progress", "canceled"]],
    ["pending -> in-progress -> failed", ["in-progress", "failed"]],
  ];
  it.each(paths)("allows %s", async (_label, steps) => {
    const { client, processor } = await parties();
    const { payment } = await makePayment(client);
    for (const status of steps) {
      const body: Record<string, unknown> = { event_code: "PX", description: `to ${status}`, status };
      if (status === "refunded") body.refund_reason = "Duplicate payment";
      const res = await event(processor, payment.id, body);
      expect(res.status, status).toBe(201);
      expect(res.json).toEqual({ id: expect.stringMatching(/^pev_/), event_code: "PX", status, description: `to ${status}`, created: expect.any(String) });
    }
    const detail = await call("GET", `/v2/payments/${payment.id}/`, { headers: client.headers });
    expect(detail.json.status).toBe(steps.at(-1));
    expect(detail.json.events.map((e: { status: string }) => e.status)).toEqual(["pending", ...steps]);
    expect(detail.json.refund_reason).toBe(steps.includes("refunded") ? "Duplicate payment" : null);
  });

  const forbidden: [string[], string][] = [
    [[], "settled"],
    [[], "refunded"],
    [[], "pending"],
    [["in-progress"], "pending"],
    [["in-progress"], "in-progress"],
    [["in-progress"], "refunded"],
    [["in-progress", "settled"], "canceled"],
    [["in-progress", "settled"], "failed"],
    [["in-progress", "settled"], "in-progress"],
    [["canceled"], "in-progress"],
    [["canceled"], "failed"],
    [["failed"], "pending"],
    [["failed"], "canceled"],
    [["in-progress", "settled", "refunded"], "settled"],
  ];
  it.each(forbidden)("after %j refuses %s with 409 and changes nothing", async (steps, target) => {
    const { client, processor } = await parties();
    const { payment } = await makePayment(client);
    for (const status of steps) {
      await event(processor, payment.id, { event_code: "PX", description: "step", status, ...(status === "refunded" ? { refund_reason: "r" } : {}) });
    }
    const before = await call("GET", `/v2/payments/${payment.id}/`, { headers: client.headers });
    const res = await event(processor, payment.id, {
      event_code: "PX",
      description: "bad",
      status: target,
      ...(target === "refunded" ? { refund_reason: "r" } : {}),
    });
    expect(res.status).toBe(409);
    expect(res.json).toEqual({ detail: expect.stringContaining(target) });
    const after = await call("GET", `/v2/payments/${payment.id}/`, { headers: client.headers });
    expect(after.json).toEqual(before.json);
  });

  it(`takes at most ${MAX_EVENTS} events on a payment, then answers 409 and writes nothing`, async () => {
    const { client, processor } = await parties();
    const { payment } = await makePayment(client);
    for (let n = 2; n <= MAX_EVENTS; n++) {
      expect((await event(processor, payment.id, { event_code: "PU15", description: `note ${n}` })).status).toBe(201);
    }
    const before = await call("GET", `/v2/payments/${payment.id}/`, { headers: client.headers });
    expect(before.json.events).toHaveLength(MAX_EVENTS);
    const res = await event(processor, payment.id, { event_code: "PU15", description: "one too many", status: "in-progress" });
    expect(res.status).toBe(409);
    expect(res.json).toEqual({ detail: `A payment has at most ${MAX_EVENTS} events.` });
    expect((await call("GET", `/v2/payments/${payment.id}/`, { headers: client.headers })).json).toEqual(before.json);
  });

  it("requires refund_reason for refunded, and only there", async () => {
    const { client, processor } = await parties();
    const { payment } = await makePayment(client);
    await event(processor, payment.id, { event_code: "P1", description: "d", status: "in-progress" });
    const early = await event(processor, payment.id, { event_code: "P2", description: "d", status: "settled", refund_reason: "no" });
    expect(early.status).toBe(400);
    expect(Object.keys(early.json)).toEqual(["refund_reason"]);
    await event(processor, payment.id, { event_code: "P2", description: "d", status: "settled" });
    for (const reason of [undefined, null, ""]) {
      const res = await event(processor, payment.id, { event_code: "P3", description: "d", status: "refunded", refund_reason: reason });
      expect(res.status).toBe(400);
      expect(Object.keys(res.json)).toEqual(["refund_reason"]);
    }
    expect((await call("GET", `/v2/payments/${payment.id}/`, { headers: client.headers })).json.status).toBe("settled");
  });

  it("keeps the status for an event without one, and sets instrument_number", async () => {
    const { client, processor } = await parties();
    const { payment } = await makePayment(client, undefined, "check");
    const res = await event(processor, payment.id, { event_code: "PU05", description: "Check printed", instrument_number: "100234" });
    expect(res.status).toBe(201);
    expect(res.json.status).toBe("pending");
    const detail = await call("GET", `/v2/payments/${payment.id}/`, { headers: client.headers });
    expect(detail.json).toMatchObject({ status: "pending", instrument_number: "100234" });
    expect(detail.json.events).toHaveLength(2);
    expect(Date.parse(detail.json.updated)).toBeGreaterThan(Date.parse(payment.updated));
  });

  it("keeps refund_reason and instrument_number through a later event without status", async () => {
    const { client, processor } = await parties();
    const { payment } = await makePayment(client, undefined, "check");
    for (const [status, extra] of [
      ["in-progress", { instrument_number: "100234" }],
      ["settled", {}],
      ["refunded", { refund_reason: "Paid twice" }],
    ] as const) {
      expect((await event(processor, payment.id, { event_code: "PX", description: status, status, ...extra })).status).toBe(201);
    }
    expect((await event(processor, payment.id, { event_code: "PU90", description: "Customer notified" })).status).toBe(201);
    const detail = await call("GET", `/v2/payments/${payment.id}/`, { headers: client.headers });
    expect(detail.json).toMatchObject({ status: "refunded", refund_reason: "Paid twice", instrument_number: "100234" });
    expect(detail.json.events).toHaveLength(5);
  });

  it.each([
    [{ description: "d" }, "event_code"],
    [{ event_code: "P" }, "description"],
    [{ event_code: "P", description: "d", status: "done" }, "status"],
    [{ event_code: 7, description: "d" }, "event_code"],
    [{ event_code: "P", description: "d", instrument_number: 12 }, "instrument_number"],
  ])("refuses event %j naming the field", async (body, field) => {
    const { client, processor } = await parties();
    const { payment } = await makePayment(client);
    const res = await event(processor, payment.id, body);
    expect(res.status).toBe(400);
    expect(Object.keys(res.json)).toEqual([field]);
  });

  it("answers 404 for an unknown payment", async () => {
    const { processor } = await parties();
    expect((await event(processor, "pmt_missing", { event_code: "P", description: "d" })).status).toBe(404);
  });
});

describe("concurrent events on one payment", () => {
  it("loses no event", async () => {
    const { client, processor } = await parties();
    const { payment } = await makePayment(client);
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => event(processor, payment.id, { event_code: `N${i}`, description: `note ${i}` })));
    expect(results.map((r) => r.status)).toEqual(Array(12).fill(201));
    const detail = await call("GET", `/v2/payments/${payment.id}/`, { headers: client.headers });
    expect(detail.json.events).toHaveLength(13);
    expect(new Set(detail.json.events.map((e: { event_code: string }) => e.event_code))).toEqual(new Set(["PU00", ...results.map((r) => r.json.event_code)]));
  });

  it("never makes a forbidden transition", async () => {
    const { client, processor } = await parties();
    const { payment } = await makePayment(client);
    // From pending, in-progress, canceled and failed all race; only one may win, and no second
    // move may follow from a state that forbids it.
    const targets = ["in-progress", "canceled", "failed", "in-progress", "canceled", "failed", "settled", "settled"];
    const results = await Promise.all(targets.map((status, i) => event(processor, payment.id, { event_code: `R${i}`, description: "race", status })));
    const detail = await call("GET", `/v2/payments/${payment.id}/`, { headers: client.headers });
    const statuses: string[] = detail.json.events.map((e: { status: string }) => e.status);
    const won = results.filter((r) => r.status === 201).length;
    expect(results.every((r) => r.status === 201 || r.status === 409)).toBe(true);
    expect(statuses).toHaveLength(1 + won);
    const allowed: Record<string, string[]> = { pending: ["in-progress", "canceled", "failed"], "in-progress": ["settled", "canceled", "failed"] };
    for (let i = 1; i < statuses.length; i++) expect(allowed[statuses[i - 1]!]).toContain(statuses[i]);
    expect(detail.json.status).toBe(statuses.at(-1));
  });
});

describe("polling GET /v2/payments/", () => {
  async function fixture() {
    const p = await parties();
    const otherBuyer = await makeCounterparty(p.client, "buyer");
    const a = (await makePayment(p.client, { buyer: p.buyer, supplier: p.supplier })).payment;
    const b = (await makePayment(p.client, { buyer: otherBuyer, supplier: p.supplier })).payment;
    const c = (await makePayment(p.client, { buyer: p.buyer, supplier: p.supplier })).payment;
    await event(p.processor, a.id, { event_code: "P1", description: "go", status: "in-progress" });
    await event(p.processor, b.id, { event_code: "P1", description: "stop", status: "canceled" });
    return { ...p, otherBuyer, a, b, c };
  }
  const list = (user: User, query: string) => call("GET", `/v2/payments/?${query}`, { headers: user.headers });

  it("lists details in created order", async () => {
    const f = await fixture();
    const res = await list(f.client, "");
    expect(ids(res)).toEqual([f.a.id, f.b.id, f.c.id]);
    expect(res.json.count).toBe(3);
    expect(res.json.results[0]).toMatchObject({ status: "in-progress", invoices: [expect.any(Object)], events: [expect.any(Object), expect.any(Object)] });
  });

  it("orders by updated when asked, and updated__gt misses nothing", async () => {
    const f = await fixture();
    const byUpdated = await list(f.client, "ordering=updated");
    expect(ids(byUpdated)).toEqual([f.c.id, f.a.id, f.b.id]);
    const cLast = byUpdated.json.results[0].updated;
    const since = await list(f.client, `ordering=updated&updated__gt=${encodeURIComponent(cLast)}`);
    expect(ids(since)).toEqual([f.a.id, f.b.id]);
    await event(f.processor, f.c.id, { event_code: "P2", description: "later", status: "in-progress" });
    const lastSeen = since.json.results.at(-1).updated;
    expect(ids(await list(f.client, `ordering=updated&updated__gt=${encodeURIComponent(lastSeen)}`))).toEqual([f.c.id]);
  });

  it("gives every write of an account its own, increasing updated", async () => {
    const f = await fixture();
    const all = await list(f.client, "ordering=updated");
    const stamps = all.json.results.map((p: { updated: string }) => Date.parse(p.updated));
    expect(new Set(stamps).size).toBe(stamps.length);
  });

  it.each([
    ["status=canceled", ["b"]],
    ["status=in-progress&status=canceled", ["a", "b"]],
    ["status=settled", []],
    ["originating_counterparty_id=OTHER", ["b"]],
    ["originating_counterparty_id=BUYER&originating_counterparty_id=OTHER", ["a", "b", "c"]],
    ["receiving_counterparty_id=SUPPLIER", ["a", "b", "c"]],
    ["receiving_counterparty_id=cpty_none", []],
    ["originating_counterparty_id=BUYER&status=pending", ["c"]],
    ["created__gt=A_CREATED", ["b", "c"]],
    ["created__gte=A_CREATED&created__lt=C_CREATED", ["a", "b"]],
    ["created__lte=A_CREATED", ["a"]],
    ["updated__gt=C_UPDATED&ordering=updated", ["a", "b"]],
    ["updated__gte=C_UPDATED&updated__lte=C_UPDATED", ["c"]],
    ["updated__lt=C_UPDATED", []],
    ["ordering=created&status=pending&status=in-progress", ["a", "c"]],
  ])("filters %s", async (query, expected) => {
    const f = await fixture();
    const c = (await call("GET", `/v2/payments/${f.c.id}/`, { headers: f.client.headers })).json;
    const q = query
      .replace("OTHER", f.otherBuyer.id)
      .replace("BUYER", f.buyer.id)
      .replace("SUPPLIER", f.supplier.id)
      .replace("A_CREATED", encodeURIComponent(f.a.created))
      .replace(/C_CREATED/g, encodeURIComponent(f.c.created))
      .replace(/C_UPDATED/g, encodeURIComponent(c.updated));
    const res = await list(f.client, q);
    expect(res.status).toBe(200);
    const names: Record<string, string> = { [f.a.id]: "a", [f.b.id]: "b", [f.c.id]: "c" };
    expect(ids(res).map((id) => names[id])).toEqual(expected);
    expect(res.json.count).toBe(expected.length);
  });

  it("takes the longest repeated filters allowed, together", async () => {
    const f = await fixture();
    const many = (name: string, real: string) => [...Array.from({ length: 49 }, (_, i) => `${name}=x${i}`), `${name}=${real}`].join("&");
    const query = [many("status", "pending"), many("originating_counterparty_id", f.buyer.id), many("receiving_counterparty_id", f.supplier.id)].join("&");
    const res = await list(f.client, query);
    expect(res.status).toBe(400); // x0.. are not statuses
    const valid = [
      Array.from({ length: 50 }, () => "status=pending").join("&"),
      many("originating_counterparty_id", f.buyer.id),
      many("receiving_counterparty_id", f.supplier.id),
    ].join("&");
    expect(ids(await list(f.client, valid))).toEqual([f.c.id]);
    const tooMany = await list(f.client, Array.from({ length: 51 }, (_, i) => `originating_counterparty_id=x${i}`).join("&"));
    expect(tooMany.status).toBe(400);
    expect(Object.keys(tooMany.json)).toEqual(["originating_counterparty_id"]);
  });

  it.each([
    ["status=done", "status", "Select a valid choice. done is not one of the available choices."],
    ["ordering=amount", "ordering", "Select a valid choice. amount is not one of the available choices."],
    ["created__gt=soon", "created__gt", "Enter a valid date/time."],
    ["created__gte=2026-13-1", "created__gte", "Enter a valid date/time."],
    ["created__lt=x", "created__lt", "Enter a valid date/time."],
    ["created__lte=x", "created__lte", "Enter a valid date/time."],
    ["updated__gt=x", "updated__gt", "Enter a valid date/time."],
    ["updated__gte=x", "updated__gte", "Enter a valid date/time."],
    ["updated__lt=x", "updated__lt", "Enter a valid date/time."],
    ["updated__lte=x", "updated__lte", "Enter a valid date/time."],
  ])("refuses %s", async (query, name, message) => {
    const { client } = await parties();
    const res = await list(client, query);
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ [name]: [message] });
  });
});
