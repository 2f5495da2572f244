import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { createDb } from "../../src/db/client";
import { counterparties, invoices } from "../../src/db/schema";
import { counterpartyView } from "../../src/services/counterparties";
import { invoiceView } from "../../src/services/invoices";
import { call, makeCounterparty, makeTenant, shardD1 } from "../helpers/api";

// A list page's rows are the views' JSON text made by SQLite (json_object, strftime); a detail is
// the same view made in JS. Both must show every value the same.
// The last: 9999-12-31T23:59:59.998Z (updated a millisecond later), the last instant both write alike.
const TIMES = [0, 1, 999, 1000, 1_700_000_000_123, 1_700_000_059_999, 1_700_000_060_000, 4_102_444_799_999, 253_402_300_799_998];
const TEXTS = ["", 'a"b\\c', "line\nbreak\ttab\r", "\u0001\u001f\u007f", "é 漢字 🙂", "\u2028\u2029", "</script>", "  spaced  ", "null"];

describe("a view made by SQL equals the same view made in JS", () => {
  it.each(TIMES.map((at, i) => [at, TEXTS[i % TEXTS.length]!] as const))("invoice created at %d, number %j", async (at, text) => {
    const { account, client } = await makeTenant();
    const buyer = await makeCounterparty(client, "buyer");
    const supplier = await makeCounterparty(client, "supplier");
    const db = createDb(await shardD1(account.id));
    const id = `inv_view${crypto.randomUUID().replaceAll("-", "")}`;
    await db.insert(invoices).values({
      id,
      accountId: account.id,
      invoiceNumber: text,
      buyerId: buyer.id,
      supplierId: supplier.id,
      amountCents: at % 1_000_000_007,
      currency: "USD",
      createdAt: at,
      updatedAt: at + 1,
    });
    const [row] = await db.select({ row: invoices, json: invoiceView.json }).from(invoices).where(eq(invoices.id, id));
    expect(JSON.parse(row!.json)).toStrictEqual(invoiceView.of(row!.row));
    expect(invoiceView.of(row!.row).created).toBe(new Date(at).toISOString());
  });

  it.each(TEXTS)("counterparty named %j", async (text) => {
    const { account } = await makeTenant();
    const db = createDb(await shardD1(account.id));
    const id = `cpty_view${crypto.randomUUID().replaceAll("-", "")}`;
    await db.insert(counterparties).values({
      id,
      accountId: account.id,
      internalId: `${text}-${id}`,
      type: "supplier",
      name: text,
      createdAt: 1_700_000_000_001,
      updatedAt: 1_700_000_000_999,
    });
    const [row] = await db.select({ row: counterparties, json: counterpartyView.json }).from(counterparties).where(eq(counterparties.id, id));
    expect(JSON.parse(row!.json)).toStrictEqual(counterpartyView.of(row!.row));
  });

  it("a list answers each row as its detail does", async () => {
    const { client } = await makeTenant();
    const buyer = await makeCounterparty(client, "buyer");
    const supplier = await makeCounterparty(client, "supplier");
    const created = await call("POST", "/v1/invoices/", {
      headers: client.headers,
      body: { invoice_number: 'INV "\n🙂', buyer_id: buyer.id, supplier_id: supplier.id, amount_cents: 12345, currency: "EUR" },
    });
    const list = await call("GET", "/v1/invoices/", { headers: client.headers });
    expect(list.headers.get("content-type")).toMatch(/^application\/json/);
    // The detail adds the payment that covers the invoice (none here); the rest is the list's row.
    const { payment_id: paymentId, ...detail } = (await call("GET", `/v1/invoices/${created.json.id}/`, { headers: client.headers })).json;
    expect(paymentId).toBeNull();
    expect(list.json).toStrictEqual({ count: 1, next: null, previous: null, results: [detail] });
    const parties = await call("GET", "/v1/counterparties/?type=buyer", { headers: client.headers });
    expect(parties.json.results).toStrictEqual([(await call("GET", `/v1/counterparties/${buyer.id}/`, { headers: client.headers })).json]);
  });
});
