import { beforeAll, describe, expect, it } from "vitest";
import { LARGEST_ROW_BYTES, LIST_PAGE_BYTES, pageBounds } from "../src/lib/list-bounds";
import { ATTEMPTS_SHOWN } from "../src/webhooks/subscriptions/deliveries";
import { ADMIN, call, makeTenant, shardD1, type User } from "./helpers/api";
import { largestCounterparty, largestInvoice, largestPayment, widest } from "./helpers/largest-rows";
import { subscribeToReceiver } from "./helpers/webhooks";

// The largest rows the API accepts, and each list at its largest page of them: every answer and
// every D1 result within the page's bytes (lib/list-bounds.ts), whatever page_size asks for.
const bytes = (value: unknown) => new TextEncoder().encode(typeof value === "string" ? value : JSON.stringify(value)).length;
/** The largest D1 result of the request, as the development layer saw it (SERVER_TIMING). */
const largestResult = (res: { headers: Headers }) => Number(/cf-largest-result;desc="(\d+)"/.exec(res.headers.get("server-timing") ?? "")![1]);
const timed = { SERVER_TIMING: "true" };

let client: User;
let processor: User;
let paymentId: string;
let subscriptionId: string;
let shard: D1Database;

/** `n` more copies of a row of `table` (its `id` and `created_at` changed), as the rows of as many more writes. */
async function copies(table: string, id: string, n: number, change: (i: number, row: Record<string, unknown>) => Record<string, unknown> = () => ({})) {
  const row = (await shard.prepare(`select * from ${table} where id = ?`).bind(id).first<Record<string, unknown>>())!;
  const made: string[] = [];
  const tag = crypto.randomUUID().slice(0, 8);
  for (let i = 1; i <= n; i++) {
    const copy: Record<string, unknown> = { ...row, id: `${id}_${tag}${i}`, created_at: Number(row.created_at) + i, ...change(i, row) };
    const names = Object.keys(copy);
    await shard
      .prepare(`insert into ${table} (${names.join(", ")}) values (${names.map(() => "?").join(", ")})`)
      .bind(...names.map((name) => copy[name] ?? null))
      .run();
    made.push(copy.id as string);
  }
  return made;
}

beforeAll(async () => {
  ({ client, processor } = await makeTenant());
  shard = await shardD1(client.accountId);
  ({
    subscription: { id: subscriptionId },
  } = await subscribeToReceiver(client, { all_payment_details: true }));
  ({ id: paymentId } = await largestPayment(client, processor));
});

describe("each list's largest row, as the API accepts it at its longest, is within its figure", () => {
  it("a payment: 100 invoices and 100 events", async () => {
    const res = await call("GET", `/v2/payments/${paymentId}/`, { headers: client.headers });
    expect(res.json.events).toHaveLength(100);
    expect(res.json.invoices).toHaveLength(100);
    expect(bytes(res.json)).toBeLessThanOrEqual(LARGEST_ROW_BYTES.payments);
    expect(bytes(res.json)).toBeGreaterThan(LARGEST_ROW_BYTES.payments * 0.9);
  });

  it("a counterparty and an invoice", async () => {
    const buyer = await largestCounterparty(client, "buyer");
    const supplier = await largestCounterparty(client, "supplier");
    const invoice = await largestInvoice(client, buyer.id, supplier.id);
    expect(bytes((await call("GET", `/v1/counterparties/${buyer.id}/`, { headers: client.headers })).json)).toBeLessThanOrEqual(
      LARGEST_ROW_BYTES.counterparties,
    );
    expect(bytes((await call("GET", `/v1/invoices/${invoice.id}/`, { headers: client.headers })).json)).toBeLessThanOrEqual(LARGEST_ROW_BYTES.invoices);
  });

  it("an account", async () => {
    const res = await call("POST", "/admin/accounts/", { body: { name: widest(200, "a") }, headers: ADMIN });
    expect(res.status).toBe(201);
    expect(bytes(res.json)).toBeLessThanOrEqual(LARGEST_ROW_BYTES.accounts);
  });

  it("a subscription with every filter list full", async () => {
    const ids = (tag: string) => Array.from({ length: 50 }, (_, i) => widest(64, `${tag}${i}`));
    const { subscription } = await subscribeToReceiver(client, {
      filters: { status: ["pending", "settled"], originating_counterparty_id: ids("o"), receiving_counterparty_id: ids("r"), payment_method: ["ach", "wire"] },
    });
    const res = await call("GET", `/v1/webhooks/${subscription.id}/`, { headers: client.headers });
    expect(res.json.filters.receiving_counterparty_id).toHaveLength(50);
    expect(bytes(res.json)).toBeLessThanOrEqual(LARGEST_ROW_BYTES.subscriptions);
  });

  it("a replay limited to 50 payments of the longest ids it takes (letters, digits, _ and -)", async () => {
    const { subscription } = await subscribeToReceiver(client);
    const res = await call("POST", `/v1/webhooks/${subscription.id}/replay/`, {
      body: { since: new Date(Date.now() - 86_400_000).toISOString(), payment_id: Array.from({ length: 50 }, (_, i) => `pmt_${i}_`.padEnd(64, "x")) },
      headers: client.headers,
    });
    expect(res.status).toBe(202);
    expect(res.json.payment_id).toHaveLength(50);
    expect(bytes(res.json)).toBeLessThanOrEqual(LARGEST_ROW_BYTES.replays);
  });

  it(`a delivery of the largest payment's whole detail with ${ATTEMPTS_SHOWN} attempts shown, however many it made`, async () => {
    const list = await call("GET", `/v1/webhooks/${subscriptionId}/deliveries/?page_size=1`, { headers: client.headers });
    const [latest] = await copies("webhook_deliveries", list.json.results[0].id, 1, () => ({
      attempts: ATTEMPTS_SHOWN + 10,
      first_started_at: null,
      sequence: null,
    }));
    for (let number = 1; number <= ATTEMPTS_SHOWN + 10; number++) {
      await shard
        .prepare(
          "insert into webhook_attempts (delivery_id, number, started_at, duration_ms, response_status, error, response_excerpt, ended, headers) values (?, ?, ?, 5, 429, 'HTTP 429', ?, 1, ?)",
        )
        .bind(
          latest,
          number,
          Date.now(),
          widest(500, "x"),
          JSON.stringify(list.json.results[0].headers ?? { "content-type": "application/json", "webhook-id": latest }),
        )
        .run();
    }
    const res = await call("GET", `/v1/webhooks/${subscriptionId}/deliveries/${latest}/`, { headers: client.headers });
    expect(res.json.attempts.map((attempt: { number: number }) => attempt.number)).toEqual(Array.from({ length: ATTEMPTS_SHOWN }, (_, i) => i + 11));
    expect(bytes(res.json)).toBeLessThanOrEqual(LARGEST_ROW_BYTES.deliveries);
  });
});

describe("every list at its largest page of its largest rows", () => {
  it(`payments: page_size=1000 answers ${pageBounds("payments").max} rows, within the page's bytes, with or without a repeated filter`, async () => {
    const { max } = pageBounds("payments");
    await copies("payments", paymentId, max + 2);
    for (const query of [
      "page_size=1000",
      "page_size=1000&status=refunded&status=failed",
      "page_size=1000&ordering=updated",
      "page=2&page_size=1000&status=refunded&status=failed",
    ]) {
      const res = await call("GET", `/v2/payments/?${query}`, { headers: client.headers, bindings: timed });
      expect(res.status, query).toBe(200);
      expect(res.json.results.length, query).toBe(query.startsWith("page=2") ? 3 : max);
      expect(bytes(res.json), query).toBeLessThanOrEqual(LIST_PAGE_BYTES);
      expect(largestResult(res), query).toBeLessThanOrEqual(LIST_PAGE_BYTES);
    }
  });

  it(`the delivery log: page_size=1000 answers ${pageBounds("deliveries").max} rows within the page's bytes`, async () => {
    const { max } = pageBounds("deliveries");
    const list = await call("GET", `/v1/webhooks/${subscriptionId}/deliveries/?page_size=1`, { headers: client.headers });
    await copies("webhook_deliveries", list.json.results[0].id, max + 2, () => ({ sequence: null }));
    const res = await call("GET", `/v1/webhooks/${subscriptionId}/deliveries/?page_size=1000`, { headers: client.headers, bindings: timed });
    expect(res.json.results).toHaveLength(max);
    expect(bytes(res.json)).toBeLessThanOrEqual(LIST_PAGE_BYTES);
    expect(largestResult(res)).toBeLessThanOrEqual(LIST_PAGE_BYTES);
  });

  it(`the feed: limit=1000 answers at most ${pageBounds("feed").max} deliveries a page within the page's bytes, signed`, async () => {
    const { max } = pageBounds("feed");
    // The latest delivery carries the payment's whole detail: as many more after it in the feed.
    const latest = (await shard
      .prepare("select id, sequence from webhook_deliveries where subscription_id = ? and sequence is not null order by sequence desc limit 1")
      .bind(subscriptionId)
      .first<{ id: string; sequence: number }>())!;
    await copies("webhook_deliveries", latest.id, max + 2, (i) => ({ sequence: latest.sequence + i }));
    let after = "";
    let largePages = 0;
    for (let page = 0; page < 100; page++) {
      const res = await call("GET", `/v1/webhooks/${subscriptionId}/feed/?limit=1000&signed=true${after}`, { headers: client.headers, bindings: timed });
      expect(res.status).toBe(200);
      if (res.json.results.length === 0) break;
      expect(res.json.results.length).toBeLessThanOrEqual(max);
      expect(bytes(res.json)).toBeLessThanOrEqual(LIST_PAGE_BYTES);
      expect(Math.max(...res.json.results.map(bytes))).toBeLessThanOrEqual(LARGEST_ROW_BYTES.feed);
      expect(largestResult(res)).toBeLessThanOrEqual(LIST_PAGE_BYTES);
      if (bytes(res.json) > (max * LARGEST_ROW_BYTES.payments) / 2) largePages += 1;
      after = `&after=${res.json.next}`;
    }
    expect(largePages).toBeGreaterThan(0);
  });
});
