import { asc, eq } from "drizzle-orm";
import { createDb } from "../../src/db/client";
import { webhookDeliveries } from "../../src/db/schema";
import { applyBodies, bodySources, eventsToRebuild } from "../../src/webhooks/outbox/bodies";
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { encodeBody, payloadFor, type ExpansionFlags } from "../../src/webhooks/wire/payload";
import { call, makePayment, makeTenant, onShard, shardD1 } from "../helpers/api";
import { receivedAt, subscribeToReceiver, waitFor } from "../helpers/webhooks";
import { canMove } from "../../src/services/payments/lifecycle";
import type { PaymentStatus } from "../../src/db/schema";

const FLAGS: ExpansionFlags = {
  invoiceIds: false,
  paymentStatus: false,
  paymentEvents: false,
  refundReason: false,
  instrumentNumber: false,
  allPaymentDetails: false,
};
/** A payment's deliveries in the order they were made, with the bodies their attempts send. */
async function bodiesOf(accountId: string, paymentId: string) {
  const db = createDb(await shardD1(accountId));
  const rows = await db
    .select()
    .from(webhookDeliveries)
    .where(eq(webhookDeliveries.paymentId, paymentId))
    .orderBy(asc(webhookDeliveries.createdAt), asc(webhookDeliveries.sequence));
  return applyBodies(rows, await bodySources(db, eventsToRebuild(rows))).map((row) => ({
    subscription_id: row.subscriptionId,
    body: row.body,
    content_type: row.contentType,
  }));
}

describe("the payment write fence", () => {
  it("freezes each delivery body with the stamp the write took, in JSON and in a form, leaving the payment's own text alone", async () => {
    const { client, processor } = await makeTenant();
    const json = await subscribeToReceiver(client, { all_payment_details: true });
    const form = await subscribeToReceiver(client, { content_type: "application/x-www-form-urlencoded", payment_events: true, payment_status: true });
    const { payment } = await makePayment(client);
    // Text that looks like a stamp, including the far-future kind the write renders bodies with.
    const description = "Paid 5123-04-05T06:07:08.999Z, see 9999-12-31T23:59:59.999Z";
    const event = await call("POST", `/v2/payments/${payment.id}/events/`, {
      body: { event_code: "PU05", description, instrument_number: "TR-1:2" },
      headers: processor.headers,
    });
    expect(event.status).toBe(201);
    const detail = (await call("GET", `/v2/payments/${payment.id}/`, { headers: client.headers })).json;
    expect(detail.updated).toBe(event.json.created);
    expect(detail.events.at(-1)).toEqual(event.json);

    const bodies = await bodiesOf(client.accountId, payment.id);
    const last = (subscriptionId: string) => bodies.filter((row) => row.subscription_id === subscriptionId).at(-1)!;
    expect(JSON.parse(last(json.subscription.id).body).object).toEqual(detail);
    expect(last(form.subscription.id).body).toBe(
      encodeBody(payloadFor(detail, { ...FLAGS, paymentEvents: true, paymentStatus: true }), "application/x-www-form-urlencoded"),
    );
    // The creation's bodies carry the creation's stamp as created and updated.
    const created = JSON.parse(bodies.find((row) => row.subscription_id === json.subscription.id)!.body).object;
    expect(created.created).toBe(detail.created);
    expect(created.updated).toBe(detail.created);
  });

  it("lands concurrent events on many payments of one account, each with a stamp of its own, rising in commit order", async () => {
    const { client, processor } = await makeTenant();
    const payments = await Promise.all(Array.from({ length: 12 }, () => makePayment(client).then((made) => made.payment)));
    const before = (await call("GET", "/v2/payments/?ordering=updated&page_size=100", { headers: client.headers })).json.results.at(-1).updated;
    const answers = await Promise.all(
      payments.map((payment) =>
        call("POST", `/v2/payments/${payment.id}/events/`, { body: { event_code: "PU05", description: "concurrent" }, headers: processor.headers }),
      ),
    );
    expect(answers.map((res) => res.status)).toEqual(payments.map(() => 201));
    const stamps = answers.map((res) => res.json.created);
    expect(new Set(stamps).size).toBe(12);
    // A poll from the last stamp seen before the burst finds exactly the 12, in stamp order.
    const polled = await call("GET", `/v2/payments/?ordering=updated&updated__gt=${before}&page_size=100`, { headers: client.headers });
    expect(polled.json.count).toBe(12);
    expect(polled.json.results.map((row: { updated: string }) => row.updated)).toEqual([...stamps].sort());
    for (const row of polled.json.results) expect(row.events.at(-1).created).toBe(row.updated);
  });
});

describe("50 concurrent events on one payment", () => {
  it("takes every one of them when each is allowed, none turned away busy", async () => {
    const { client, processor } = await makeTenant();
    const { payment } = await makePayment(client);
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        call("POST", `/v2/payments/${payment.id}/events/`, { body: { event_code: `PN${i}`, description: `note ${i}` }, headers: processor.headers }),
      ),
    );
    expect(answers.map((res) => res.status)).toEqual(Array(50).fill(201));
    const detail = (await call("GET", `/v2/payments/${payment.id}/`, { headers: client.headers })).json;
    expect(detail.events.map((event: { event_code: string }) => event.event_code).sort()).toEqual(["PU00", ...answers.map((_, i) => `PN${i}`)].sort());
  });

  it("leaves a legal history: every accepted event is in it with its deliveries, every refused one left nothing", async () => {
    const { client, processor } = await makeTenant();
    const first = await subscribeToReceiver(client, { payment_status: true });
    const second = await subscribeToReceiver(client, { all_payment_details: true });
    const { payment } = await makePayment(client);
    const statuses = [undefined, "in-progress", "settled", "canceled", "failed", "refunded", "pending"] as const;
    const bodies = Array.from({ length: 50 }, (_, i) => {
      const status = statuses[i % statuses.length];
      return {
        event_code: `PX${i}`,
        description: `event ${i}`,
        ...(status ? { status } : {}),
        ...(status === "refunded" ? { refund_reason: "Paid twice" } : {}),
      };
    });
    const answers = await Promise.all(bodies.map((body) => call("POST", `/v2/payments/${payment.id}/events/`, { body, headers: processor.headers })));
    expect(answers.filter((res) => ![201, 409, 503].includes(res.status))).toEqual([]);
    const accepted = answers.filter((res) => res.status === 201).map((res) => res.json);
    expect(accepted.length).toBeGreaterThan(0);

    const detail = (await call("GET", `/v2/payments/${payment.id}/`, { headers: client.headers })).json;
    // The history is the creation and exactly the accepted events, in stamp order, each move legal.
    expect(
      detail.events
        .slice(1)
        .map((event: { id: string }) => event.id)
        .sort(),
    ).toEqual(accepted.map((event) => event.id).sort());
    expect(detail.events.map((event: { created: string }) => event.created)).toEqual(detail.events.map((event: { created: string }) => event.created).sort());
    let status = "pending";
    for (const event of detail.events.slice(1)) {
      if (event.status !== status) expect(canMove(status as PaymentStatus, event.status)).toBe(true);
      status = event.status;
    }
    expect(detail.status).toBe(status);

    // Each subscription has one delivery per write that landed (the creation and each accepted event), and no other.
    for (const { subscription } of [first, second]) {
      const rows = (await bodiesOf(client.accountId, payment.id)).filter((row) => row.subscription_id === subscription.id);
      expect(rows).toHaveLength(1 + accepted.length);
    }
    const objects = (await bodiesOf(client.accountId, payment.id))
      .filter((row) => row.subscription_id === second.subscription.id)
      .map((row) => JSON.parse(row.body).object);
    expect(objects.map((object) => object.updated).sort()).toEqual([detail.created, ...accepted.map((event) => event.created)].sort());
    expect(objects.find((object) => object.updated === detail.updated)).toEqual(detail);
    // And every one of them arrives.
    for (const { box } of [first, second])
      await waitFor(
        () => receivedAt(box),
        (got) => got.length === 1 + accepted.length,
      );
  });
});

/** A D1 binding whose batches go through `change` first (given the batch's number, from 1). */
function withBatches(d1: D1Database, change: (n: number, statements: D1PreparedStatement[]) => Promise<D1PreparedStatement[]>): D1Database {
  let seen = 0;
  const proxy: D1Database = new Proxy(d1, {
    get(target, name) {
      if (name === "batch") return async (statements: D1PreparedStatement[]) => target.batch(await change(++seen, statements));
      // A request's session is this binding itself (locally every query is the primary's).
      if (name === "withSession") return () => proxy;
      if (name === "getBookmark") return () => null;
      const value = Reflect.get(target, name);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return proxy;
}

/** A D1 binding that runs `before` once, just before the `n`th batch it is given. */
const beforeBatch = (d1: D1Database, n: number, before: () => Promise<unknown>) =>
  withBatches(d1, async (k, statements) => {
    if (k === n) await before();
    return statements;
  });

/** A D1 binding whose `n`th batch fails at its last statement, after all the others ran in it. */
const failingBatch = (d1: D1Database, n: number) =>
  withBatches(d1, async (k, statements) => (k === n ? [...statements, d1.prepare("insert into no_such_table values (1)")] : statements));

describe("a subscription deleted just before a write's batch", () => {
  it.each([["an event"], ["a new payment"]])("does not fail %s: the change is written, with deliveries for the subscriptions that remain", async (label) => {
    const { client, processor } = await makeTenant();
    const kept = await subscribeToReceiver(client);
    const gone = await subscribeToReceiver(client);
    const made = await makePayment(client);
    // Each write is one batch, which takes the subscriptions as they are when it runs.
    const shard = await onShard(client.accountId, (d1) =>
      beforeBatch(d1, 1, async () => {
        expect((await call("DELETE", `/v1/webhooks/${gone.subscription.id}/`, { headers: client.headers })).status).toBe(204);
      }),
    );
    let paymentId: string;
    if (label === "an event") {
      const res = await call("POST", `/v2/payments/${made.payment.id}/events/`, {
        body: { event_code: "PU15", description: "note" },
        headers: processor.headers,
        bindings: shard,
      });
      expect(res.status).toBe(201);
      paymentId = made.payment.id;
    } else {
      const invoice = await call("POST", "/v1/invoices/", {
        body: { invoice_number: "INV-race", buyer_id: made.buyer.id, supplier_id: made.supplier.id, amount_cents: 100 },
        headers: client.headers,
      });
      const res = await call("POST", "/v2/payments/", {
        body: {
          originating_counterparty_id: made.buyer.id,
          receiving_counterparty_id: made.supplier.id,
          invoice_ids: [invoice.json.id],
          payment_method: "ach",
        },
        headers: client.headers,
        bindings: shard,
      });
      expect(res.status).toBe(201);
      paymentId = res.json.id;
    }
    const rows = await (
      await shardD1(client.accountId)
    )
      .prepare("select subscription_id from webhook_deliveries where payment_id = ? order by created_at")
      .bind(paymentId)
      .all<{ subscription_id: string }>();
    expect(rows.results.map((row) => row.subscription_id)).toEqual(
      label === "an event" ? [kept.subscription.id, kept.subscription.id] : [kept.subscription.id],
    );
    await waitFor(
      () => receivedAt(kept.box),
      (got) => got.length === 2,
    );
  });
});

describe("a write batch that fails in D1", () => {
  it.each([["an event"], ["a new payment"]])("leaves nothing of %s: no change, no event, no count, no delivery; the retry writes it once", async (label) => {
    const { client, processor, account } = await makeTenant();
    const { box } = await subscribeToReceiver(client);
    const made = await makePayment(client);
    await waitFor(
      () => receivedAt(box),
      (got) => got.length === 1,
    );
    const snapshot = async () => {
      const db = await shardD1(account.id);
      const [payments, events, deliveries, counts] = await db.batch([
        db.prepare("select id, status, version, detail from payments where account_id = ? order by id").bind(account.id),
        db.prepare("select e.id from payment_events e join payments p on p.id = e.payment_id where p.account_id = ? order by e.id").bind(account.id),
        db.prepare("select id from webhook_deliveries where account_id = ? order by id").bind(account.id),
        db.prepare("select resource, n from list_counts where account_id = ? order by resource").bind(account.id),
      ]);
      return [payments!.results, events!.results, deliveries!.results, counts!.results];
    };
    const invoice = await call("POST", "/v1/invoices/", {
      body: { invoice_number: "INV-fail", buyer_id: made.buyer.id, supplier_id: made.supplier.id, amount_cents: 100 },
      headers: client.headers,
    });
    const before = await snapshot();
    const send = (bindings: Partial<typeof env> = {}) =>
      label === "an event"
        ? call("POST", `/v2/payments/${made.payment.id}/events/`, {
            body: { event_code: "PU10", description: "Sent", status: "in-progress" },
            headers: processor.headers,
            bindings,
          })
        : call("POST", "/v2/payments/", {
            body: {
              originating_counterparty_id: made.buyer.id,
              receiving_counterparty_id: made.supplier.id,
              invoice_ids: [invoice.json.id],
              payment_method: "ach",
            },
            headers: client.headers,
            bindings,
          });
    // The write is its one batch on the shard.
    const failed = await send(await onShard(account.id, (d1) => failingBatch(d1, 1)));
    expect(failed.status).toBe(500);
    expect(failed.json).toEqual({ detail: "A server error occurred." });
    expect(await snapshot()).toEqual(before);
    const retried = await send();
    expect(retried.status).toBe(201);
    const after = await snapshot();
    expect(after[1]!.length).toBe(before[1]!.length + 1); // one event more
    expect(after[2]!.length).toBe(before[2]!.length + 1); // one delivery more
    await waitFor(
      () => receivedAt(box),
      (got) => got.length === 2,
    );
  });
});
