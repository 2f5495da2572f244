import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, makeInvoice, makePayment, makeTenant } from "./helpers/api";
import { recordingD1 } from "./helpers/recording-d1";
import { subscribeToReceiver } from "./helpers/webhooks";

// Every list query the service issues for a one-value filter, a time range, the polling order or a
// cursor page, planned by SQLite (EXPLAIN QUERY PLAN): no table scan, no temporary B-tree for the
// ORDER BY, and a filter served by an index that starts with it, never by a walk of the account's
// rows in created order (the pitfall `npm run bench` measured at 1,000,000 rows read).
const tenant = await makeTenant();
const { subscription } = await subscribeToReceiver(tenant.client);
const { payment, buyer, supplier, invoice } = await makePayment(tenant.client);
await makePayment(tenant.client, { buyer, supplier }); // pages of two payments read their details by an id list
await makeInvoice(tenant.client, buyer.id, supplier.id);
const firstPage = await call("GET", "/v1/invoices/?page_size=1", { headers: tenant.client.headers });

const lists: [string, string, RegExp | null][] = [
  ["/v1/counterparties/?type=buyer", "counterparties", /type=\?/],
  [`/v1/counterparties/?internal_id=${encodeURIComponent(buyer.internal_id)}`, "counterparties", /internal_id=\?/],
  [`/v1/invoices/?invoice_number=${encodeURIComponent(invoice.invoice_number)}`, "invoices", /invoice_number=\?/],
  ["/v1/invoices/?created__gte=2026-01-01T00:00:00Z", "invoices", /created_at>\?/],
  ["/v2/payments/?status=pending", "payments", /status=\?/],
  ["/v2/payments/?status=pending&status=failed", "payments", /status=\?/],
  [`/v2/payments/?receiving_counterparty_id=${supplier.id}&receiving_counterparty_id=cpty_other`, "payments", /receiving_counterparty_id=\?/],
  [`/v1/invoices/?invoice_number=${encodeURIComponent(invoice.invoice_number)}&invoice_number=INV-other&invoice_number=INV-third`, "invoices", /invoice_number=\?/],
  [`/v1/counterparties/?internal_id=${encodeURIComponent(buyer.internal_id)}&internal_id=other`, "counterparties", /internal_id=\?/],
  [`/v2/payments/?originating_counterparty_id=${buyer.id}`, "payments", /originating_counterparty_id=\?/],
  [`/v2/payments/?receiving_counterparty_id=${supplier.id}`, "payments", /receiving_counterparty_id=\?/],
  ["/v2/payments/?ordering=updated&updated__gt=2026-01-01T00:00:00Z", "payments", /updated_at>\?/],
  ["/v2/payments/?status=pending&created__gte=2026-01-01T00:00:00.0005Z&page=2&page_size=1", "payments", /status=\?/],
  [firstPage.json.next.slice(firstPage.json.next.indexOf("/v1/")), "invoices", null],
  [`/v2/payments/${payment.id}/`, "payments", null],
  [`/v1/webhooks/${subscription.id}/deliveries/?payment_id=${payment.id}`, "webhook_deliveries", /payment_id=\?/],
  [`/v1/webhooks/${subscription.id}/deliveries/?status=failed`, "webhook_deliveries", /status=\?/],
  [`/v1/webhooks/${subscription.id}/deliveries/?created__gte=2026-01-01T00:00:00Z`, "webhook_deliveries", /created_at>\?/],
  [`/v1/webhooks/${subscription.id}/stats/?window=7d`, "webhook_stats", /bucket_start>\?/],
];

async function plansOf(path: string) {
  const { db, statements } = recordingD1(env.DB);
  const res = await call("GET", path, { headers: tenant.client.headers, bindings: { DB: db } });
  expect(res.status, path).toBe(200);
  const selects = statements.filter((s) => /^\s*select/i.test(s.sql) && !/api_users/.test(s.sql));
  return Promise.all(
    selects.map(async (s) => {
      const { results } = await env.DB.prepare(`EXPLAIN QUERY PLAN ${s.sql}`).bind(...s.params).all<{ detail: string }>();
      return { sql: s.sql, plan: results.map((row) => row.detail) };
    }),
  );
}

describe("query plans of the lists", () => {
  it.each(lists)("%s", async (path, table, filter) => {
    const plans = await plansOf(path);
    expect(plans.length).toBeGreaterThan(0);
    for (const { sql, plan } of plans) {
      const text = plan.join("\n");
      expect(text, sql).not.toMatch(/^SCAN (?!json_each|CONSTANT ROW)/m);
      expect(text, sql).not.toMatch(/TEMP B-TREE FOR ORDER BY/);
    }
    if (filter) {
      const onTable = plans.flatMap((p) => p.plan).filter((line) => line.startsWith(`SEARCH ${table} `));
      expect(onTable.length, path).toBeGreaterThan(0);
      for (const { sql, plan } of plans) for (const line of plan.filter((l) => l.startsWith(`SEARCH ${table} `))) expect(line, `${path}: ${sql}`).toMatch(filter);
    }
  });
});
