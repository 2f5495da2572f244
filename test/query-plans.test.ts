import { describe, expect, it } from "vitest";
import { call, makeInvoice, makePayment, makeTenant, shardD1, shardOf } from "./helpers/api";
import type { DeliveryMessage } from "../src/webhooks";
import { recordingD1 } from "./helpers/recording-d1";
import { subscribeToReceiver, waitFor } from "./helpers/webhooks";
import { sweepOutbox } from "../src/webhooks/upkeep/sweeper";
import { applyRetention } from "../src/webhooks/upkeep/retention";
import { createDb } from "../src/db/client";

// Every list query the service issues for a one-value filter, a time range, the polling order, a
// cursor page or a page=N, planned by SQLite (EXPLAIN QUERY PLAN): no table scan, no temporary
// B-tree for the ORDER BY, and a filter served by an index that starts with it, never by a walk of
// the account's rows in created order (the pitfall `npm run bench` measured at 1,000,000 rows read).
const tenant = await makeTenant();
const { subscription } = await subscribeToReceiver(tenant.client);
const { payment, buyer, supplier, invoice } = await makePayment(tenant.client);
await makePayment(tenant.client, { buyer, supplier }); // pages of two payments read their details by an id list
await makeInvoice(tenant.client, buyer.id, supplier.id);
const firstPage = await call("GET", "/v1/invoices/?page_size=1", { headers: tenant.client.headers });
// The two payments' deliveries go out in the background: recorded before the tests below, so
// that no consumer is still at work (and logging) when the file ends.
await waitFor(
  () => call("GET", `/v1/webhooks/${subscription.id}/deliveries/`, { headers: tenant.client.headers }),
  (res) => res.json.results.length === 2 && res.json.results.every((delivery: { status: string }) => delivery.status === "succeeded"),
);
/** The tenant's shard: every list reads there (the directory answers only the credential check). */
const shard = await shardD1(tenant.account.id);
const shardKey = `SHARD_${await shardOf(tenant.account.id)}`;

const lists: [string, string, RegExp | null][] = [
  ["/v1/counterparties/?type=buyer", "counterparties", /type=\?/],
  [`/v1/counterparties/?internal_id=${encodeURIComponent(buyer.internal_id)}`, "counterparties", /internal_id=\?/],
  [`/v1/invoices/?invoice_number=${encodeURIComponent(invoice.invoice_number)}`, "invoices", /invoice_number=\?/],
  ["/v1/invoices/?created__gte=2026-01-01T00:00:00Z", "invoices", /created_at>\?/],
  ["/v2/payments/?status=pending", "payments", /status=\?/],
  ["/v2/payments/?status=pending&status=failed", "payments", /status=\?/],
  [`/v2/payments/?receiving_counterparty_id=${supplier.id}&receiving_counterparty_id=cpty_other`, "payments", /receiving_counterparty_id=\?/],
  [
    `/v1/invoices/?invoice_number=${encodeURIComponent(invoice.invoice_number)}&invoice_number=INV-other&invoice_number=INV-third`,
    "invoices",
    /invoice_number=\?/,
  ],
  [`/v1/counterparties/?internal_id=${encodeURIComponent(buyer.internal_id)}&internal_id=other`, "counterparties", /internal_id=\?/],
  [`/v2/payments/?originating_counterparty_id=${buyer.id}`, "payments", /originating_counterparty_id=\?/],
  [`/v2/payments/?receiving_counterparty_id=${supplier.id}`, "payments", /receiving_counterparty_id=\?/],
  ["/v2/payments/?ordering=updated&updated__gt=2026-01-01T00:00:00Z", "payments", /updated_at>\?/],
  ["/v2/payments/?status=pending&created__gte=2026-01-01T00:00:00.0005Z&page=2&page_size=1", "payments", /status=\?/],
  ["/v1/invoices/?page=2&page_size=1", "invoices", /created_at>\?/],
  ["/v1/invoices/?created__gte=2026-01-01T00:00:00.0005Z&page=2&page_size=1", "invoices", /created_at>\?/],
  ["/v2/payments/?ordering=updated&updated__gt=2026-01-01T00:00:00Z&page=2&page_size=1", "payments", /updated_at>\?/],
  [firstPage.json.next.slice(firstPage.json.next.indexOf("/v1/")), "invoices", null],
  [`/v2/payments/${payment.id}/`, "payments", null],
  // A payment's deliveries are found on the log (the table's key) at its changes' stamps.
  [`/v1/webhooks/${subscription.id}/deliveries/?payment_id=${payment.id}`, "webhook_deliveries", /PRIMARY KEY \(subscription_id=\? AND created_at=\?/],
  [`/v1/webhooks/${subscription.id}/deliveries/?status=failed`, "webhook_deliveries", /(PRIMARY KEY|held_idx) \(subscription_id=\?/],
  [`/v1/webhooks/${subscription.id}/deliveries/?created__gte=2026-01-01T00:00:00Z`, "webhook_deliveries", /created_at>\?/],
  // Each delivery's body is rebuilt from its event, sought on the events' whole key.
  [`/v1/webhooks/${subscription.id}/deliveries/`, "payment_events", /PRIMARY KEY \(payment_id=\? AND seq=\?\)/],
  [`/v1/webhooks/${subscription.id}/stats/?window=7d`, "webhook_stats", /bucket_start>\?/],
];

type PlanRow = { id: number; parent: number; detail: string };

const tables = new Set((await shard.prepare("select name from sqlite_master where type = 'table'").all<{ name: string }>()).results.map((row) => row.name));

/** The stored table a plan line reads (`SCAN t`, `SEARCH t USING …`), or null for derived rows (json_each, a subquery, a CTE). */
function tableRead(detail: string): string | null {
  const name = /^(?:SCAN|SEARCH) (\S+)/.exec(detail)?.[1];
  return name && tables.has(name) ? name : null;
}

/**
 * The plan's faults: a stored table scanned whole, or a stored table's rows sorted for an ORDER
 * BY (a temporary B-tree beside a read of a table). Sorting a few derived rows (the page=N seek
 * orders the buckets of one parent, at most 60) is not one.
 */
function faults(rows: PlanRow[]): string[] {
  const found: string[] = [];
  for (const row of rows) {
    if (/^SCAN /.test(row.detail) && tableRead(row.detail)) found.push(row.detail);
    if (/TEMP B-TREE FOR ORDER BY/.test(row.detail)) {
      const beside = rows.filter((other) => other.parent === row.parent && other !== row && tableRead(other.detail));
      if (beside.length > 0) found.push(`${row.detail} beside ${beside.map((other) => other.detail).join(", ")}`);
    }
  }
  return found;
}

async function plansOf(path: string) {
  const { db, statements } = recordingD1(shard);
  const res = await call("GET", path, { headers: tenant.client.headers, bindings: { [shardKey]: db } });
  expect(res.status, path).toBe(200);
  const selects = statements.filter((s) => /^\s*(select|with)\b/i.test(s.sql));
  return Promise.all(
    selects.map(async (s) => {
      const { results } = await shard
        .prepare(`EXPLAIN QUERY PLAN ${s.sql}`)
        .bind(...s.params)
        .all<PlanRow>();
      return { sql: s.sql, plan: results.map((row) => row.detail), rows: results };
    }),
  );
}

describe("query plans of the lists", () => {
  it.each(lists)("%s", async (path, table, filter) => {
    const plans = await plansOf(path);
    expect(plans.length).toBeGreaterThan(0);
    for (const { sql, rows } of plans) expect(faults(rows), sql).toEqual([]);
    // A bound LIMIT would make SQLite compile the statement again on every run (db/fixed-limit).
    for (const { sql } of plans) expect(sql, path).not.toMatch(/\blimit\s+\?/i);
    if (filter) {
      const onTable = plans.flatMap((p) => p.plan).filter((line) => line.startsWith(`SEARCH ${table} `));
      expect(onTable.length, path).toBeGreaterThan(0);
      for (const { sql, plan } of plans)
        for (const line of plan.filter((l) => l.startsWith(`SEARCH ${table} `))) expect(line, `${path}: ${sql}`).toMatch(filter);
    }
  });
});

describe("query plans of a new payment", () => {
  it("finds an invoice's live link by its key, not by reading payment_invoices", async () => {
    const { db, statements } = recordingD1(shard);
    const fresh = await makeInvoice(tenant.client, buyer.id, supplier.id);
    const res = await call("POST", "/v2/payments/", {
      headers: tenant.client.headers,
      body: { originating_counterparty_id: buyer.id, receiving_counterparty_id: supplier.id, invoice_ids: [fresh.id], payment_method: "ach" },
      bindings: { [shardKey]: db },
    });
    expect(res.status).toBe(201);
    const [live] = statements.filter((s) => /^\s*select\b/i.test(s.sql) && /from "payment_invoices"/.test(s.sql));
    const plan = (
      await shard
        .prepare(`EXPLAIN QUERY PLAN ${live!.sql}`)
        .bind(...live!.params)
        .all<PlanRow>()
    ).results.map((row) => row.detail);
    expect(plan).toEqual([expect.stringMatching(/^SEARCH payment_invoices USING PRIMARY KEY \(invoice_id=\? AND released_by=\?\)$/)]);
  });
});

describe("query plans of the writes", () => {
  /**
   * Every statement of a write's batch, planned: no stored table scanned, and no table of many rows
   * per account (invoices, events, counterparties, invoice links) walked by its account alone: each is
   * found on its key. (`npm run bench` measured a new payment at 495 ms on an account of
   * 1,000,000 invoices when SQLite walked them in created order.)
   */
  const walks = /^SEARCH (invoices|payment_events|counterparties|payment_invoices) \S+ USING (COVERING )?INDEX \S+ \(account_id=\?\)$/;
  type Bindings = Record<string, D1Database>;
  const writes: [string, (bindings: Bindings) => Promise<{ status: number }>][] = [
    [
      "a new payment of two invoices, keyed",
      async (bindings) => {
        const [a, b] = [await makeInvoice(tenant.client, buyer.id, supplier.id), await makeInvoice(tenant.client, buyer.id, supplier.id)];
        const body = { originating_counterparty_id: buyer.id, receiving_counterparty_id: supplier.id, invoice_ids: [a.id, b.id], payment_method: "ach" };
        return call("POST", "/v2/payments/", { headers: { ...tenant.client.headers, "Idempotency-Key": crypto.randomUUID() }, body, bindings });
      },
    ],
    [
      "a payment event that cancels, keyed",
      async (bindings) => {
        const made = await makePayment(tenant.client, { buyer, supplier });
        const body = { event_code: "PU90", description: "Canceled", status: "canceled" };
        return call("POST", `/v2/payments/${made.payment.id}/events/`, {
          headers: { ...tenant.processor.headers, "Idempotency-Key": crypto.randomUUID() },
          body,
          bindings,
        });
      },
    ],
    [
      "a new invoice",
      (bindings) =>
        call("POST", "/v1/invoices/", {
          headers: tenant.client.headers,
          body: { invoice_number: `INV-${crypto.randomUUID()}`, buyer_id: buyer.id, supplier_id: supplier.id, amount_cents: 100 },
          bindings,
        }),
    ],
  ];
  it.each(writes)("%s", async (_name, send) => {
    const { db, statements } = recordingD1(shard);
    const res = await send({ [shardKey]: db });
    expect(res.status).toBe(201);
    expect(statements.length).toBeGreaterThan(3);
    for (const s of statements) {
      const { results: all } = await shard
        .prepare(`EXPLAIN QUERY PLAN ${s.sql}`)
        .bind(...s.params)
        .all<PlanRow>();
      // An insert into payments lists SQLite's lookups of the tables whose foreign keys name a
      // payment; they run only while a deferred violation is outstanding (a move's copy), not here.
      const results = /^insert into "payments"/.test(s.sql)
        ? all.filter((row) => !/^(SCAN payment_invoices|SEARCH payment_events USING PRIMARY KEY \(payment_id=\?\))$/.test(row.detail))
        : all;
      const plan = results.map((row) => row.detail);
      expect(faults(results), `${s.sql}\n${plan.join("\n")}`).toEqual([]);
      expect(
        plan.filter((line) => walks.test(line)),
        `${s.sql}\n${plan.join("\n")}`,
      ).toEqual([]);
    }
  });
});

describe("query plans of the outbox sweeper", () => {
  it("walks the due index in order, from where its last round stopped", async () => {
    const now = Date.now();
    for (const at of [now - 2000, now - 1000]) {
      await shard
        .prepare(
          `insert into webhook_deliveries (id, subscription_id, account_id, payment_id, body, status, attempts, next_attempt_at, enqueued_at, created_at, updated_at)
         values (?, ?, ?, ?, '{}', 'pending', 0, ?, null, ?, ?)`,
        )
        .bind(crypto.randomUUID(), subscription.id, tenant.client.accountId, payment.id, at, at, at)
        .run();
    }
    const { db, statements } = recordingD1(shard);
    const queue = { send: async () => {}, sendBatch: async () => {} } as unknown as Queue<DeliveryMessage>;
    expect(await sweepOutbox(createDb(db), { queue, shard: "test" }, now, { round: 1, max: 2 })).toBe(2);
    const selects = statements.filter((s) => /^\s*select\b/i.test(s.sql));
    expect(selects).toHaveLength(2);
    const plans = await Promise.all(
      selects.map(
        async (s) =>
          (
            await shard
              .prepare(`EXPLAIN QUERY PLAN ${s.sql}`)
              .bind(...s.params)
              .all<PlanRow>()
          ).results,
      ),
    );
    for (const rows of plans) expect(faults(rows)).toEqual([]);
    for (const { sql } of selects) expect(sql).not.toMatch(/\blimit\s+\?/i);
    expect(plans[0]!.map((row) => row.detail)).toContainEqual(
      expect.stringMatching(/^SEARCH webhook_deliveries USING INDEX webhook_deliveries_due_idx \(next_attempt_at<\?\)/),
    );
    expect(plans[1]!.map((row) => row.detail)).toContainEqual(
      expect.stringMatching(/^SEARCH webhook_deliveries USING INDEX webhook_deliveries_due_idx \(next_attempt_at>\? AND next_attempt_at<\?\)/),
    );
  });
});

describe("query plans of the sweeper's look at fresh deliveries", () => {
  it("finds lapsed leases on the leased index and reads each subscription's log in the window on its key", async () => {
    const now = Date.now() + 10 * 60_000;
    const created = now - 3 * 60_000;
    await shard
      .prepare(
        `insert into webhook_deliveries (id, subscription_id, account_id, payment_id, body, status, attempts, next_attempt_at, enqueued_at, created_at, updated_at)
       values (?, ?, ?, ?, '{}', 'pending', 0, ?, ?, ?, ?)`,
      )
      .bind(crypto.randomUUID(), subscription.id, tenant.client.accountId, payment.id, created, created, created, created)
      .run();
    const { db, statements } = recordingD1(shard);
    const queue = { send: async () => {}, sendBatch: async () => {} } as unknown as Queue<DeliveryMessage>;
    expect(await sweepOutbox(createDb(db), { queue, shard: "test" }, now)).toBeGreaterThanOrEqual(1);
    const selects = statements.filter((s) => /^\s*select\b/i.test(s.sql));
    const plans = await Promise.all(
      selects.map(async (s) =>
        (
          await shard
            .prepare(`EXPLAIN QUERY PLAN ${s.sql}`)
            .bind(...s.params)
            .all<PlanRow>()
        ).results.map((row) => row.detail),
      ),
    );
    for (const { sql } of selects) expect(sql).not.toMatch(/\blimit\s+\?/i);
    // Only the leased index is read whole: it holds the deliveries under a lease, and no others.
    for (const plan of plans)
      expect(plan.filter((detail) => /^SCAN webhook_deliveries(?! USING INDEX webhook_deliveries_leased_idx$)|TEMP B-TREE/.test(detail))).toEqual([]);
    const all = plans.flat();
    expect(all).toContainEqual("SCAN webhook_deliveries USING INDEX webhook_deliveries_leased_idx");
    expect(all).toContainEqual(
      expect.stringMatching(/^SEARCH webhook_deliveries USING PRIMARY KEY \(subscription_id=\? AND created_at>\? AND created_at<\?\)/),
    );
  });
});

describe("query plans of retention", () => {
  it("reads the front of each subscription's log, oldest first, and the stats' old buckets by their key", async () => {
    const { db, statements } = recordingD1(shard);
    await applyRetention(createDb(db), undefined, 30, Date.now());
    const selects = statements.filter((s) => /^\s*select\b/i.test(s.sql));
    const plans = await Promise.all(
      selects.map(
        async (s) =>
          (
            await shard
              .prepare(`EXPLAIN QUERY PLAN ${s.sql}`)
              .bind(...s.params)
              .all<PlanRow>()
          ).results,
      ),
    );
    for (const rows of plans) expect(faults(rows)).toEqual([]);
    for (const { sql } of statements) expect(sql).not.toMatch(/\blimit\s+\?/i);
    // The log of each subscription (the table's key) up to the cutoff, and for each row found a
    // look-up of the (empty) moves table by its key, and of its payment by its key (the size of a
    // body rebuilt from its detail).
    expect(plans[0]!.map((row) => row.detail)).toEqual([
      "SEARCH webhook_deliveries USING PRIMARY KEY (subscription_id=? AND created_at<?)",
      "USING INDEX sqlite_autoindex_webhook_subscriptions_1 FOR IN-OPERATOR",
      expect.stringMatching(/^CORRELATED SCALAR SUBQUERY \d+$/),
      "SEARCH m USING INDEX sqlite_autoindex_moves_1 (account_id=?)",
      expect.stringMatching(/^CORRELATED SCALAR SUBQUERY \d+$/),
      "SEARCH payments USING INDEX sqlite_autoindex_payments_1 (id=?)",
    ]);
  });
});

describe("the plan check itself", () => {
  it("finds a table read whole and a table's rows sorted", async () => {
    const plan = async (sql: string) => (await shard.prepare(`EXPLAIN QUERY PLAN ${sql}`).all<PlanRow>()).results;
    expect(faults(await plan("select * from invoices where amount_cents > 5"))).toEqual([expect.stringMatching(/^SCAN invoices/)]);
    expect(faults(await plan("select * from invoices where account_id = 'a' order by amount_cents"))).toEqual([
      expect.stringMatching(/TEMP B-TREE FOR ORDER BY beside SEARCH invoices/),
    ]);
    expect(faults(await plan("select * from invoices where account_id = 'a' order by created_at, id"))).toEqual([]);
  });
});
