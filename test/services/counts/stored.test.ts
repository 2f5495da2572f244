import { describe, expect, it } from "vitest";
import { countKey, keyParts, storedAt, storedCountKey } from "../../../src/services/counts/stored";
import { call, makeCounterparty, makeInvoice, makeTenant, type User } from "../../helpers/api";

describe("storedCountKey", () => {
  it.each([
    ["payments", {}, "payments"],
    ["payments", { ordering: "updated" }, "payments"],
    ["payments", { status: ["pending"] }, "payments/status=pending"],
    ["payments", { status: ["pending"], ordering: "updated" }, "payments/status=pending"],
    ["payments", { receiving_counterparty_id: ["cpty_1"] }, "payments/receiving_counterparty_id=cpty_1"],
    ["payments", { originating_counterparty_id: ["cpty_2"] }, "payments/originating_counterparty_id=cpty_2"],
    ["payments", { status: ["pending", "failed"] }, null],
    ["payments", { status: ["pending"], receiving_counterparty_id: ["cpty_1"] }, null],
    ["payments", { status: ["pending"], created__gte: { ms: 1 } }, null],
    ["payments", { updated__gt: { ms: 1 } }, null],
    ["counterparties", { type: ["buyer"] }, "counterparties/type=buyer"],
    ["counterparties", { internal_id: ["A-1"] }, null],
    ["invoices", {}, "invoices"],
    ["invoices", { invoice_number: ["INV-1"] }, null],
    ["invoices", { created__lt: { ms: 1 } }, null],
  ] as const)("%s %j -> %s", (resource, filters, key) => {
    expect(storedCountKey(resource, filters)).toBe(key);
  });
});

describe("keyParts", () => {
  it.each([
    ["payments", { resource: "payments" }],
    ["payments/status=in-progress", { resource: "payments", field: "status", value: "in-progress" }],
    ["payments/receiving_counterparty_id=cpty_1", { resource: "payments", field: "receiving_counterparty_id", value: "cpty_1" }],
    ["counterparties/type=buyer", { resource: "counterparties", field: "type", value: "buyer" }],
  ] as const)("%s -> %j", (key, parts) => {
    expect(keyParts(key)).toEqual(parts);
    expect(countKey(parts.resource as "payments", "field" in parts ? parts.field : undefined, "value" in parts ? parts.value : undefined)).toBe(key);
  });
});

describe("storedAt", () => {
  it.each([
    ["payments", { resource: "payments", column: "n" }],
    ["payments/status=pending", { resource: "payments", column: "pending" }],
    ["payments/status=in-progress", { resource: "payments", column: "in_progress" }],
    ["payments/status=refunded", { resource: "payments", column: "refunded" }],
    ["payments/status=unknown", { resource: "payments/status=unknown", column: "n" }],
    ["payments/receiving_counterparty_id=cpty_1", { resource: "payments/receiving_counterparty_id=cpty_1", column: "n" }],
    ["counterparties/type=buyer", { resource: "counterparties/type=buyer", column: "n" }],
  ] as const)("%s -> %j", (key, stored) => {
    expect(storedAt(key)).toEqual(stored);
  });
});

// The stored counts against the rows: after creations, moves of every kind and racing events, the
// count a list answers from its stored row equals the count of its matches.
describe("stored counts stay exact", () => {
  it("after payments are made and moved, racing included", async () => {
    const { client, processor } = await makeTenant();
    const buyers = [await makeCounterparty(client, "buyer"), await makeCounterparty(client, "buyer")];
    const suppliers = [await makeCounterparty(client, "supplier"), await makeCounterparty(client, "supplier"), await makeCounterparty(client, "supplier")];
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) {
      const [buyer, supplier] = [buyers[i % 2]!, suppliers[i % 3]!];
      const invoice = await makeInvoice(client, buyer.id, supplier.id);
      const res = await call("POST", "/v2/payments/", {
        body: { originating_counterparty_id: buyer.id, receiving_counterparty_id: supplier.id, invoice_ids: [invoice.id], payment_method: "ach" },
        headers: client.headers,
      });
      ids.push(res.json.id);
    }
    const move = (user: User, id: string, status?: string, extra: Record<string, string> = {}) =>
      call("POST", `/v2/payments/${id}/events/`, {
        body: { event_code: "PX", description: "move", ...(status ? { status } : {}), ...extra },
        headers: user.headers,
      });
    await move(processor, ids[0]!, "in-progress");
    await move(processor, ids[1]!, "canceled");
    await move(processor, ids[2]!, "failed");
    await move(processor, ids[3]!, "in-progress");
    await move(processor, ids[3]!, "settled");
    await move(processor, ids[3]!, "refunded", { refund_reason: "Paid twice" });
    await move(processor, ids[4]!);
    await move(processor, ids[5]!, "settled"); // refused: pending cannot settle
    // Racing moves on one payment: only a legal sequence applies, and the counts follow it.
    await Promise.all(["in-progress", "canceled", "failed", "in-progress", "settled"].map((status) => move(processor, ids[6]!, status)));

    const filters = [
      ...["pending", "in-progress", "settled", "canceled", "failed", "refunded"].map((status) => `status=${status}`),
      ...buyers.map((b) => `originating_counterparty_id=${b.id}`),
      ...suppliers.map((s) => `receiving_counterparty_id=${s.id}`),
    ];
    let total = 0;
    for (const filter of filters) {
      const stored = await call("GET", `/v2/payments/?${filter}&page_size=1000`, { headers: client.headers });
      const counted = await call("GET", `/v2/payments/?${filter}&created__gte=2000-01-01&page_size=1000`, { headers: client.headers });
      expect(stored.json.count, filter).toBe(counted.json.count);
      expect(stored.json.count, filter).toBe(stored.json.results.length);
      if (filter.startsWith("status=")) total += stored.json.count;
    }
    expect(total).toBe(8);
    for (const type of ["buyer", "supplier"]) {
      const list = await call("GET", `/v1/counterparties/?type=${type}`, { headers: client.headers });
      expect(list.json.count).toBe(type === "buyer" ? 2 : 3);
      expect(list.json.results).toHaveLength(list.json.count);
    }
  });
});
