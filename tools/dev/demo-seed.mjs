// The demo data of `npm start`, as SQL that is safe to run on every start: fixed ids, INSERT OR
// IGNORE, and the demo users' password hashes taken from .dev.vars each time. The account and its
// users go to the directory, its data to its shard.
import { createHash } from "node:crypto";
import { paymentDetailSql, recountSql } from "../lib/sql.mjs";

export const DEMO_ACCOUNT = "acct_demoAccount000000001";
const T0 = Date.UTC(2026, 10, 2, 9, 0, 0); // 2026-11-02T09:00:00.000Z
const minutes = (n) => T0 + n * 60_000;
const q = (value) => (value === null ? "NULL" : typeof value === "number" ? String(value) : `'${String(value).replace(/'/g, "''")}'`);
const row = (table, values) => `INSERT OR IGNORE INTO ${table} VALUES (${values.map(q).join(", ")});`;
const sha256 = (text) => createHash("sha256").update(text).digest("hex");

const BUYER = "cpty_demoBuyerAcme00000001";
const NORTHWIND = "cpty_demoSupplierNorthwind1";
const GLOBEX = "cpty_demoSupplierGlobex0001";

const invoices = [
  ["inv_demoInvoice0000000001", "INV-1001", NORTHWIND, 125000, 10],
  ["inv_demoInvoice0000000002", "INV-1002", NORTHWIND, 48050, 11],
  ["inv_demoInvoice0000000003", "INV-1003", GLOBEX, 990000, 12],
  ["inv_demoInvoice0000000004", "INV-1004", GLOBEX, 15000, 13],
  ["inv_demoInvoice0000000005", "INV-1005", NORTHWIND, 72500, 14],
  ["inv_demoInvoice0000000006", "INV-1006", GLOBEX, 30000, 15],
];

// [id, supplier, invoice ids, method, events: [code, status, description, minute], instrument]
const payments = [
  [
    "pmt_demoPaymentPending0001",
    NORTHWIND,
    ["inv_demoInvoice0000000001", "inv_demoInvoice0000000002"],
    "ach",
    [["PU00", "pending", "Payment created", 20]],
    null,
  ],
  [
    "pmt_demoPaymentInProgress1",
    GLOBEX,
    ["inv_demoInvoice0000000003"],
    "wire",
    [
      ["PU00", "pending", "Payment created", 21],
      ["PU10", "in-progress", "Sent to the bank", 30],
    ],
    "FW-20261102-0042",
  ],
  [
    "pmt_demoPaymentSettled0001",
    GLOBEX,
    ["inv_demoInvoice0000000004"],
    "check",
    [
      ["PU00", "pending", "Payment created", 22],
      ["PU10", "in-progress", "Check printed", 31],
      ["PU20", "settled", "Check cashed", 40],
    ],
    "100234",
  ],
];

/** The directory's part: the demo account on `shard`, and its two users with the passwords of .dev.vars. */
export function demoDirectorySql(vars, shard) {
  return (
    [
      `INSERT OR IGNORE INTO accounts (id, name, created_at, erased_at, shard) VALUES (${q(DEMO_ACCOUNT)}, 'Demo Payables Inc.', ${T0}, NULL, ${q(shard)});`,
      ...[
        ["demo-client", "client", vars.DEMO_CLIENT_PASSWORD],
        ["demo-processor", "processor", vars.DEMO_PROCESSOR_PASSWORD],
      ].map(
        ([
          username,
          role,
          password,
        ]) => `INSERT INTO api_users (username, account_id, role, password_hash, created_at) VALUES (${q(username)}, ${q(DEMO_ACCOUNT)}, ${q(role)}, '${sha256(password)}', ${T0})
      ON CONFLICT (username) DO UPDATE SET password_hash = excluded.password_hash;`,
      ),
    ].join("\n") + "\n"
  );
}

/** The shard's part: the account's own data. */
export function demoShardSql() {
  const sql = [
    row("tenants", [DEMO_ACCOUNT, T0, null]),
    row("counterparties", [BUYER, DEMO_ACCOUNT, "BUY-001", "buyer", "Acme Retail", minutes(1), minutes(1)]),
    row("counterparties", [NORTHWIND, DEMO_ACCOUNT, "SUP-001", "supplier", "Northwind Paper", minutes(2), minutes(2)]),
    row("counterparties", [GLOBEX, DEMO_ACCOUNT, "SUP-002", "supplier", "Globex Logistics", minutes(3), minutes(3)]),
  ];
  for (const [id, number, supplier, amount, minute] of invoices) {
    sql.push(row("invoices", [id, DEMO_ACCOUNT, number, BUYER, supplier, amount, "USD", minutes(minute), minutes(minute)]));
  }
  for (const [id, supplier, invoiceIds, method, events, instrument] of payments) {
    const amount = invoiceIds.reduce((sum, invoiceId) => sum + invoices.find(([i]) => i === invoiceId)[3], 0);
    const last = events.at(-1);
    sql.push(
      row("payments", [
        id,
        DEMO_ACCOUNT,
        BUYER,
        supplier,
        amount,
        "USD",
        method,
        last[1],
        instrument,
        null,
        events.length,
        `demo-${events.length}`,
        minutes(events[0][3]),
        minutes(last[3]),
        null,
      ]),
    );
    // A canceled or failed payment let go of its invoices: its own id is their released_by.
    const releasedBy = ["canceled", "failed"].includes(last[1]) ? id : "";
    for (const invoiceId of invoiceIds)
      sql.push(`INSERT OR IGNORE INTO payment_invoices (invoice_id, released_by, payment_id) VALUES (${q(invoiceId)}, ${q(releasedBy)}, ${q(id)});`);
    events.forEach(([code, status, description, minute], index) => {
      // Each event keeps the instrument number and refund reason it left (the instrument comes with the second).
      const left = index === 0 ? null : instrument;
      sql.push(
        `INSERT OR IGNORE INTO payment_events (id, payment_id, seq, event_code, status, description, created_at, instrument_number, refund_reason) VALUES (${[
          `pev_demo${id.slice(8, 20)}${index + 1}`.padEnd(26, "0"),
          id,
          index + 1,
          code,
          status,
          description,
          minutes(minute),
          left,
          null,
        ]
          .map(q)
          .join(", ")});`,
      );
    });
  }
  // Each link carries its invoice's number, amount and created, as the payment write copies them.
  sql.push(
    "UPDATE payment_invoices SET invoice_number = i.invoice_number, amount_cents = i.amount_cents, invoice_created_at = i.created_at FROM invoices i WHERE i.id = payment_invoices.invoice_id;",
  );
  sql.push(paymentDetailSql());
  sql.push(recountSql(DEMO_ACCOUNT));
  return sql.join("\n") + "\n";
}
