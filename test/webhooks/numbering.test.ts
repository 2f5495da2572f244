import { createExecutionContext, createMessageBatch, env, waitOnExecutionContext } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import worker from "../../src/index";
import type { DeliveryMessage } from "../../src/webhooks";
import { FAILING_AFTER_ATTEMPTS } from "../../src/webhooks/delivery/health";
import { call, makePayment, makeTenant, type User } from "../helpers/api";
import { subscribeToReceiver, subscribeUnanswered, waitFor } from "../helpers/webhooks";
import { feedFromStart, logOf, type Item } from "../helpers/feed";

// One rule for every numbered delivery (docs/interface.md, "Sequence and version"): health events
// recorded by consumers whose clocks differ, and numbers after a discard.
const SHARD = "B";
const db = env.SHARD_B!;

afterEach(() => vi.restoreAllMocks());

/**
 * A pending delivery of a subscription, due 10 s ago (so that a consumer whose clock is behind
 * finds it due too); its number does not matter: the health subscription's are what is checked.
 */
async function pending(user: User, subscriptionId: string) {
  const id = crypto.randomUUID();
  const now = Date.now() - 10_000;
  await db
    .prepare(
      `insert into webhook_deliveries (id, subscription_id, account_id, payment_id, body, status, attempts, next_attempt_at, enqueued_at, created_at, updated_at)
       values (?, ?, ?, 'pmt_x', '{"object_id":"pmt_x"}', 'pending', 0, ?, ?, ?, ?)`,
    )
    .bind(id, subscriptionId, user.accountId, now, now, now, now)
    .run();
  return id;
}

/**
 * One consumer invocation on the deliveries, as an isolate whose clock is `skewMs` off: the
 * receiver answers `status`.
 */
async function consume(ids: string[], status: number, skewMs: number) {
  const realNow = Date.now.bind(Date);
  vi.spyOn(Date, "now").mockImplementation(() => realNow() + skewMs);
  vi.spyOn(globalThis, "fetch").mockImplementation(async () => new Response("x", { status }));
  try {
    const batch = createMessageBatch<DeliveryMessage>(
      "payments-deliveries",
      ids.map((id) => ({ id, timestamp: new Date(), attempts: 1, body: { delivery_id: id, shard: SHARD } })),
    );
    const queue = { send: async () => {}, sendBatch: async () => {} } as unknown as Queue<DeliveryMessage>;
    const ctx = createExecutionContext();
    await worker.queue(batch, { ...env, DELIVERIES: queue }, ctx);
    await waitOnExecutionContext(ctx);
  } finally {
    vi.restoreAllMocks();
  }
}

describe("numbering", () => {
  it("numbers a health subscription's events 1..32 without a repeat when 16 subscriptions fail and recover on consumers whose clocks differ; the feed lists each once, in order, page by page", async () => {
    const { client } = await makeTenant({ shard: SHARD });
    const health = await subscribeUnanswered(client, "subscription.health");
    const watched = await Promise.all(Array.from({ length: 16 }, () => subscribeUnanswered(client)));
    // Each consumer invocation runs on an isolate of its own clock: up to 5 s behind or ahead.
    const skews = [0, -5000, 3000, -1000, 5000, -3000, 1000, -4000];
    let turn = 0;
    for (let failure = 0; failure < FAILING_AFTER_ATTEMPTS + 1; failure++) {
      for (const subscription of watched) await consume([await pending(client, subscription.id)], 500, skews[turn++ % skews.length]!);
    }
    for (const subscription of watched) await consume([await pending(client, subscription.id)], 200, skews[turn++ % skews.length]!);

    const log = await logOf(client, health.id);
    expect(log).toHaveLength(32);
    expect(log.map((row) => row.sequence)).toEqual(Array.from({ length: 32 }, (_, i) => i + 1));
    // The log's order (by created) is the sequence's.
    expect(log.map((row) => row.created)).toEqual([...log.map((row) => row.created)].sort());
    const events = log.map((row) => row.event);
    expect(events.filter((event) => event === "subscription.failing")).toHaveLength(16);
    expect(events.filter((event) => event === "subscription.recovered")).toHaveLength(16);
    // A reader taking one at a time reaches every one, once, in order.
    const read = await feedFromStart(client, health.id, 1);
    expect(read.map((item) => item.sequence)).toEqual(log.map((row) => row.sequence));
    expect(read.map((item) => item.delivery_id)).toEqual(log.map((row) => row.id));
  });

  it("never gives a number twice after a discard, and a cursor handed out before or after it reads on without expiring", async () => {
    const { client, processor } = await makeTenant({ shard: SHARD });
    const { subscription } = await subscribeToReceiver(client);
    const payment = (await makePayment(client)).payment as { id: string };
    const event = (code: string) =>
      call("POST", `/v2/payments/${payment.id}/events/`, { body: { event_code: code, description: code }, headers: processor.headers });
    for (const code of ["PU01", "PU02"]) expect((await event(code)).status).toBe(201); // 1..3, delivered
    await waitFor(
      () => logOf(client, subscription.id),
      (rows) => rows.length === 3 && rows.every((row) => row.status === "succeeded"),
    );
    const early = await call("GET", `/v1/webhooks/${subscription.id}/feed/?limit=2`, { headers: client.headers });
    await call("PATCH", `/v1/webhooks/${subscription.id}/`, { body: { is_active: false }, headers: client.headers });
    for (let i = 0; i < 5; i++) expect((await event(`PU1${i}`)).status).toBe(201); // held as 4..8
    const atEight = await call("GET", `/v1/webhooks/${subscription.id}/feed/?after=${early.json.next}`, { headers: client.headers });
    expect(atEight.json.results.map((item: Item) => item.sequence)).toEqual([3, 4, 5, 6, 7, 8]);
    const discarded = await call("POST", `/v1/webhooks/${subscription.id}/held/discard/`, { headers: client.headers });
    expect(discarded.json).toEqual({ discarded: 5 });
    for (let i = 0; i < 8; i++) expect((await event(`PU2${i}`)).status).toBe(201); // held as 9..16

    const log = await logOf(client, subscription.id);
    expect(log.map((row) => row.sequence)).toEqual([1, 2, 3, 9, 10, 11, 12, 13, 14, 15, 16]);
    // The cursor after 8 (a discarded delivery) reads 9.. ; the one from before the discard reads 3, 9..
    const after8 = await call("GET", `/v1/webhooks/${subscription.id}/feed/?after=${atEight.json.next}`, { headers: client.headers });
    expect(after8.status).toBe(200);
    expect(after8.json.results.map((item: Item) => item.sequence)).toEqual([9, 10, 11, 12, 13, 14, 15, 16]);
    const fromEarly = await call("GET", `/v1/webhooks/${subscription.id}/feed/?after=${early.json.next}`, { headers: client.headers });
    expect(fromEarly.json.results.map((item: Item) => item.sequence)).toEqual([3, 9, 10, 11, 12, 13, 14, 15, 16]);
    // Page by page from the start, following next: every kept delivery, once.
    for (const limit of [1, 2, 3])
      expect((await feedFromStart(client, subscription.id, limit)).map((item) => item.sequence)).toEqual(log.map((row) => row.sequence));
  });
});
