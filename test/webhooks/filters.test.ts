import { env } from "cloudflare:test";
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { createDb } from "../../src/db/client";
import { matches, matchesSql, type FilteredPayment, type Filters } from "../../src/webhooks/outbox/filters";
import { wholeList, call, makePayment, makeTenant, type User } from "../helpers/api";
import { allEnded, receivedAt, subscribeToReceiver, waitFor } from "../helpers/webhooks";

const payment: FilteredPayment = {
  status: "settled",
  originating_counterparty_id: "cpty_b",
  receiving_counterparty_id: "cpty_s",
  payment_method: "ach",
  amount_cents: 5000,
};

describe("filters: the rule in TypeScript and in SQL agree", () => {
  // [case, filters, expected]
  const cases: [string, Filters | null, boolean][] = [
    ["no filters", null, true],
    ["empty filters", {}, true],
    ["its status", { status: ["settled"] }, true],
    ["one of its statuses (OR within)", { status: ["failed", "settled"] }, true],
    ["another status", { status: ["failed", "refunded"] }, false],
    ["its buyer and its method (AND across)", { originating_counterparty_id: ["cpty_b"], payment_method: ["ach", "wire"] }, true],
    ["its buyer but another method", { originating_counterparty_id: ["cpty_b"], payment_method: ["card"] }, false],
    ["another supplier", { receiving_counterparty_id: ["cpty_x"] }, false],
    ["amount at the lower bound", { amount_cents__gte: 5000 }, true],
    ["amount under the lower bound", { amount_cents__gte: 5001 }, false],
    ["amount at the upper bound", { amount_cents__lte: 5000 }, true],
    ["amount over the upper bound", { amount_cents__lte: 4999 }, false],
    ["inside both bounds, with a status", { amount_cents__gte: 100, amount_cents__lte: 10_000, status: ["settled"] }, true],
    ["an id that only looks alike", { originating_counterparty_id: ["cpty_B"] }, false],
  ];
  it.each(cases)("%s", async (_name, filters, expected) => {
    expect(matches(filters, payment)).toBe(expected);
    const bound = Object.fromEntries(Object.entries(payment).map(([key, value]) => [key, sql`${value}`])) as Record<
      keyof FilteredPayment,
      ReturnType<typeof sql>
    >;
    const stored = filters === null ? null : JSON.stringify(filters);
    const [row] = await createDb(env.SHARD_A!).all<{ m: number }>(sql`select ${matchesSql(sql`(select ${stored})`, bound)} as m`);
    expect(Boolean(row!.m)).toBe(expected);
  });
});

const subscribe = (user: User, filters: unknown) => subscribeToReceiver(user, { payment_status: true, filters });
const event = (user: User, paymentId: string, body: Record<string, unknown>) =>
  call("POST", `/v2/payments/${paymentId}/events/`, { body, headers: user.headers });

describe("a subscription's filters", () => {
  it("deliver only the changes after which the payment matches; a change filtered out takes no sequence number", async () => {
    const { client, processor } = await makeTenant();
    const { subscription, box } = await subscribe(client, { status: ["settled", "failed"] });
    expect(subscription.filters).toEqual({ status: ["settled", "failed"] });
    const { payment } = await makePayment(client);
    expect((await event(processor, payment.id, { event_code: "PU10", description: "sent", status: "in-progress" })).status).toBe(201);
    expect((await event(processor, payment.id, { event_code: "PU20", description: "paid", status: "settled" })).status).toBe(201);
    const [got] = await waitFor(
      () => receivedAt(box),
      (list) => list.length === 1,
    );
    expect(JSON.parse(got!.body)).toMatchObject({ object_id: payment.id, payment_status: "settled" });
    expect(got!.headers["hook-sequence"]).toBe("1");
    expect(got!.headers["hook-payment-version"]).toBe("3");
    await allEnded(client, [subscription.id]);
    expect(await receivedAt(box)).toHaveLength(1);
    expect((await call("GET", `/v1/webhooks/${subscription.id}/deliveries/`, { headers: client.headers })).json.count).toBe(1);
  });

  it("are tested against a payment as it is now", async () => {
    const { client } = await makeTenant();
    const { payment } = await makePayment(client);
    const { subscription } = await subscribe(client, { status: ["pending"], amount_cents__gte: payment.amount_cents });
    const test = (id: string, body: unknown, user = client) => call("POST", `/v1/webhooks/${id}/filters/test/`, { body, headers: user.headers });
    expect((await test(subscription.id, { payment_id: payment.id })).json).toEqual({ matches: true });
    await call("PATCH", `/v1/webhooks/${subscription.id}/`, { body: { filters: { payment_method: ["wire"] } }, headers: client.headers });
    expect((await test(subscription.id, { payment_id: payment.id })).json).toEqual({ matches: false });
    const missing = await test(subscription.id, { payment_id: "pmt_nope" });
    expect(missing.status).toBe(400);
    expect(missing.json).toEqual({ payment_id: [expect.any(String)] });
    expect((await test(subscription.id, {})).json).toEqual({ payment_id: ["This field is required."] });
    const stranger = await makeTenant();
    expect((await test(subscription.id, { payment_id: payment.id }, stranger.client)).status).toBe(404);
    // Cleared: every change again.
    const cleared = await call("PATCH", `/v1/webhooks/${subscription.id}/`, { body: { filters: null }, headers: client.headers });
    expect(cleared.json.filters).toBeNull();
    expect((await test(subscription.id, { payment_id: payment.id })).json).toEqual({ matches: true });
  });

  it.each([
    ["an unknown key", { colour: ["red"] }],
    ["a status that is not one", { status: ["paid"] }],
    ["a method that is not one", { payment_method: ["cash"] }],
    ["an empty list", { status: [] }],
    ["a list of the wrong type", { originating_counterparty_id: "cpty_b" }],
    ["a bound that is not an integer", { amount_cents__gte: "100" }],
    ["a bound of zero", { amount_cents__lte: 0 }],
    ["bounds the wrong way round", { amount_cents__gte: 500, amount_cents__lte: 100 }],
    ["not an object", ["status"]],
    ["no filter at all (null means every change)", {}],
    ["more values than a query filter takes (50)", { originating_counterparty_id: Array.from({ length: 51 }, (_, i) => `cpty_${i}`) }],
    ["60 copies of one id", { receiving_counterparty_id: Array.from({ length: 60 }, () => "cpty_same") }],
  ])("refuse %s: 400 keyed by filters", async (_name, filters) => {
    const { client } = await makeTenant();
    const res = await call("POST", "/v1/webhooks/", {
      body: { event: "payment.changed", url: "http://127.0.0.1:9/x", content_type: "application/json", username: "u", password: "p", filters },
      headers: client.headers,
    });
    expect(res.status).toBe(400);
    expect(Object.keys(res.json)).toEqual(["filters"]);
    expect(res.json.filters).toEqual([expect.any(String)]);
  });

  it("change while changes are written: each change is delivered once or not at all, and the sequence has no gap", async () => {
    const { client, processor } = await makeTenant();
    const { subscription, box } = await subscribe(client, { status: ["in-progress"] });
    const payments = (await Promise.all(Array.from({ length: 8 }, () => makePayment(client)))).map((made) => made.payment);
    const writes = payments.map((p, i) =>
      i === 4
        ? call("PATCH", `/v1/webhooks/${subscription.id}/`, { body: { filters: { status: ["in-progress", "canceled"] } }, headers: client.headers }).then(() =>
            event(processor, p.id, { event_code: "PU40", description: "canceled", status: "canceled" }),
          )
        : event(processor, p.id, { event_code: i % 2 ? "PU40" : "PU10", description: "moved", status: i % 2 ? "canceled" : "in-progress" }),
    );
    await Promise.all(writes);
    const log = await waitFor(
      () => wholeList(`/v1/webhooks/${subscription.id}/deliveries/`, client.headers),
      (res) => res.json.results.every((row: { status: string }) => row.status === "succeeded"),
    );
    const rows = log.json.results as { id: string; sequence: number; payment_id: string }[];
    // Every in-progress change matched both filters; the canceled one after the change matched the new one.
    const inProgress = payments.filter((_, i) => i !== 4 && i % 2 === 0).map((p) => p.id);
    for (const id of [...inProgress, payments[4]!.id]) expect(rows.map((row) => row.payment_id)).toContain(id);
    expect(rows.map((row) => row.sequence).sort((a, b) => a - b)).toEqual(rows.map((_, i) => i + 1));
    const received = await waitFor(
      () => receivedAt(box),
      (list) => list.length >= rows.length,
    );
    expect(new Set(received.map((got) => got.headers["hook-delivery"])).size).toBe(received.length);
    expect(received).toHaveLength(rows.length);
  });

  it("keep a value given twice once, as a query filter does", async () => {
    const { client } = await makeTenant();
    const res = await call("POST", "/v1/webhooks/", {
      body: {
        event: "payment.changed",
        url: "http://127.0.0.1:9/x",
        content_type: "application/json",
        username: "u",
        password: "p",
        filters: { status: ["settled", "settled", "failed"] },
      },
      headers: client.headers,
    });
    expect(res.status).toBe(201);
    expect(res.json.filters).toEqual({ status: ["settled", "failed"] });
  });
});
