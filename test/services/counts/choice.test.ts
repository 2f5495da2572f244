import { describe, expect, it } from "vitest";
import { countingOf, type CountChoice, type SeekChoice } from "../../../src/services/counts/choice";

// Which count answers a list and which buckets its page=N seeks by (the counts room's rules 1 and
// 4, src/services/counts/index.ts), for every kind of list and filter.
const at = "2026-01-01T00:00:00Z";
const PAYMENTS = { fields: ["created", "updated"], sort: "created", perStatus: true } as const;
const BY_UPDATED = { ...PAYMENTS, sort: "updated" } as const;
const INVOICES = { fields: ["created"], sort: "created" } as const;
const COUNTERPARTIES = { fields: [], sort: "created" } as const;

const cases: [
  string,
  "payments" | "invoices" | "counterparties",
  object,
  { fields: readonly string[]; sort: string; perStatus?: boolean },
  CountChoice,
  SeekChoice,
][] = [
  ["payments, no filter", "payments", {}, PAYMENTS, { by: "stored", key: "payments" }, { field: "created" }],
  ["payments by updated, no filter", "payments", { ordering: "updated" }, BY_UPDATED, { by: "stored", key: "payments" }, { field: "updated" }],
  [
    "payments of one buyer",
    "payments",
    { originating_counterparty_id: ["cpty_b"] },
    PAYMENTS,
    { by: "stored", key: "payments/originating_counterparty_id=cpty_b" },
    null,
  ],
  ["payments of two buyers", "payments", { originating_counterparty_id: ["cpty_b", "cpty_c"] }, PAYMENTS, { by: "matches" }, null],
  ["payments created in a range", "payments", { created__gte: at }, PAYMENTS, { by: "buckets", field: "created" }, { field: "created" }],
  ["payments updated in a range, by created", "payments", { updated__gt: at }, PAYMENTS, { by: "buckets", field: "updated" }, null],
  [
    "payments updated in a range, by updated",
    "payments",
    { updated__gt: at, ordering: "updated" },
    BY_UPDATED,
    { by: "buckets", field: "updated" },
    { field: "updated" },
  ],
  [
    "payments of one status",
    "payments",
    { status: ["pending"] },
    PAYMENTS,
    { by: "stored", key: "payments/status=pending" },
    { field: "created", status: "pending" },
  ],
  [
    "payments of one status, created in a range",
    "payments",
    { status: ["pending"], created__gte: at },
    PAYMENTS,
    { by: "buckets", field: "created", status: "pending" },
    { field: "created", status: "pending" },
  ],
  [
    "payments of one status by updated",
    "payments",
    { status: ["settled"], ordering: "updated" },
    BY_UPDATED,
    { by: "stored", key: "payments/status=settled" },
    null,
  ],
  ["payments of two statuses", "payments", { status: ["pending", "settled"] }, PAYMENTS, { by: "matches" }, null],
  ["payments of one status and one buyer", "payments", { status: ["pending"], originating_counterparty_id: ["cpty_b"] }, PAYMENTS, { by: "matches" }, null],
  ["invoices, no filter", "invoices", {}, INVOICES, { by: "stored", key: "invoices" }, { field: "created" }],
  ["invoices created in a range", "invoices", { created__lt: at }, INVOICES, { by: "buckets", field: "created" }, { field: "created" }],
  ["invoices by number", "invoices", { invoice_number: ["INV-1"] }, INVOICES, { by: "matches" }, null],
  ["counterparties, no filter", "counterparties", {}, COUNTERPARTIES, { by: "stored", key: "counterparties" }, null],
  ["counterparties of one type", "counterparties", { type: ["buyer"] }, COUNTERPARTIES, { by: "stored", key: "counterparties/type=buyer" }, null],
  ["counterparties by internal id", "counterparties", { internal_id: ["X"] }, COUNTERPARTIES, { by: "matches" }, null],
];

describe("which count and which seek a list takes", () => {
  it.each(cases)("%s", (_name, resource, filters, counted, count, seek) => {
    expect(countingOf(resource, filters, counted)).toEqual({ count, seek });
  });
});
