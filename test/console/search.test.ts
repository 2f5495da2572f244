import { describe, expect, it } from "vitest";
import { formFields, when } from "../../console/src/format";
import { classifyId, matchText } from "../../console/src/search";

describe("the console's search box", () => {
  it.each([
    ["pmt_demoPaymentPending0001", { kind: "page", path: "/payments/pmt_demoPaymentPending0001" }],
    ["  cpty_demoBuyerAcme00000001 ", { kind: "page", path: "/counterparties/cpty_demoBuyerAcme00000001" }],
    ["inv_demoInvoice0000000001", { kind: "page", path: "/invoices/inv_demoInvoice0000000001" }],
    ["0B7F2C1E-4D5A-4E8B-9C3F-2A1B0C9D8E7F", { kind: "uuid", id: "0b7f2c1e-4d5a-4e8b-9c3f-2a1b0c9d8e7f" }],
    ["pmt_", { kind: "none" }],
    ["pev_Zr3kP0aQ7mLx2bV9cN1tY4", { kind: "none" }],
    ["", { kind: "none" }],
    ["hello", { kind: "text", text: "hello" }],
    [" INV-1005 ", { kind: "text", text: "INV-1005" }],
  ])("reads %j", (text, found) => {
    expect(classifyId(text)).toMatchObject(found);
  });

  const northwind = { id: "cpty_n", name: "Northwind Paper", internal_id: "SUP-001", type: "supplier" };
  const acme = { id: "cpty_a", name: "Acme Retail", internal_id: "BUY-001", type: "buyer" };
  it.each([
    [
      "an invoice number",
      "INV-1",
      { invoices: [{ id: "inv_1", invoice_number: "INV-1" }], byInternalId: [], counterparties: [northwind, acme] },
      ["/invoices/inv_1"],
    ],
    ["a name, any case, in part", "northwind", { invoices: [], byInternalId: [], counterparties: [northwind, acme] }, ["/counterparties/cpty_n"]],
    [
      "an internal id, once though its name matches too",
      "SUP-001",
      { invoices: [], byInternalId: [northwind], counterparties: [{ ...northwind, name: "SUP-001 Ltd" }] },
      ["/counterparties/cpty_n"],
    ],
    [
      "several things",
      "a",
      { invoices: [{ id: "inv_a", invoice_number: "a" }], byInternalId: [], counterparties: [northwind, acme] },
      ["/invoices/inv_a", "/counterparties/cpty_n", "/counterparties/cpty_a"],
    ],
    ["nothing", "zebra", { invoices: [], byInternalId: [], counterparties: [northwind, acme] }, []],
  ])("matches %s", (_name, text, found, paths) => {
    expect(matchText(text, found).map((match) => match.path)).toEqual(paths);
  });
});

describe("how the console shows values", () => {
  it("names the time zone of every instant", () => {
    expect(when("2026-11-25T09:12:03.000Z", "UTC")).toMatch(/UTC$/);
    expect(when("2026-11-25T09:12:03.000Z", "Asia/Tokyo")).toMatch(/GMT\+9$/);
    expect(when(null)).toBe("—");
  });

  it("decodes a form body field by field, and leaves JSON alone", () => {
    const body =
      "object_type=payment&object_id=pmt_1&invoice_ids=inv_1&invoice_ids=inv_2&refund_reason=&payment_events=%5B%7B%22id%22%3A%22pev_1%22%7D%5D&note=a+b%26c";
    expect(formFields(body, "application/x-www-form-urlencoded")).toEqual([
      ["object_type", "payment"],
      ["object_id", "pmt_1"],
      ["invoice_ids", "inv_1"],
      ["invoice_ids", "inv_2"],
      ["refund_reason", ""],
      ["payment_events", '[\n  {\n    "id": "pev_1"\n  }\n]'],
      ["note", "a b&c"],
    ]);
    expect(formFields('{"a":1}', "application/json")).toBeNull();
    expect(formFields("a=1", null)).toBeNull();
  });
});
