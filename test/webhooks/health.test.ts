import { createExecutionContext, createMessageBatch, env, waitOnExecutionContext } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import worker from "../../src/index";
import { OVERFLOW_DELAY_MS } from "../../src/webhooks/delivery/lanes";
import type { DeliveryMessage } from "../../src/webhooks";
import { failuresAfter, FAILING_AFTER_ATTEMPTS } from "../../src/webhooks/delivery/health";
import { call, makeTenant, type User } from "../helpers/api";
import { subscribeUnanswered } from "../helpers/webhooks";

// Operational events (docs/interface.md, "Operational events"), through the consumer with the receiver's answers mocked.
const SHARD = "B";
const db = env.SHARD_B!;

afterEach(() => vi.restoreAllMocks());

/** A pending delivery of a subscription, due now; its schedule started `startedAgoMs` ago after `attempts` attempts. */
async function pending(user: User, subscriptionId: string, { attempts = 0, startedAgoMs = null as number | null } = {}) {
  const id = crypto.randomUUID();
  const now = Date.now();
  await db
    .prepare(
      `insert into webhook_deliveries (id, subscription_id, account_id, payment_id, body, status, attempts, next_attempt_at, schedule_started_at, enqueued_at, created_at, updated_at)
       values (?, ?, ?, 'pmt_x', '{"object_id":"pmt_x"}', 'pending', ?, ?, ?, ?, ?, ?)`,
    )
    .bind(id, subscriptionId, user.accountId, attempts, now, startedAgoMs === null ? null : now - startedAgoMs, now, now, now)
    .run();
  return id;
}

/** Runs the consumer on the deliveries, the receiver answering `status`; returns the headers each request carried. */
async function consume(ids: string[], status: number) {
  const sent: Record<string, string>[] = [];
  vi.spyOn(globalThis, "fetch").mockImplementation(async (_url, init) => {
    sent.push(init!.headers as Record<string, string>);
    return new Response("x", { status });
  });
  // What an invocation puts off for a moment (past its share of attempts to receivers not known
  // to answer quickly: lanes.ts) is consumed again at once; retries on their schedule are not.
  let next = ids;
  for (let round = 0; round < 20 && next.length > 0; round++) {
    const putOff: string[] = [];
    const queue = {
      send: async () => {},
      sendBatch: async (messages: { body: DeliveryMessage; delaySeconds?: number }[]) =>
        void putOff.push(...messages.filter((m) => (m.delaySeconds ?? 0) <= OVERFLOW_DELAY_MS / 1000).map((m) => m.body.delivery_id)),
    } as unknown as Queue<DeliveryMessage>;
    const batch = createMessageBatch<DeliveryMessage>(
      "payments-deliveries",
      next.map((id) => ({ id, timestamp: new Date(), attempts: 1, body: { delivery_id: id, shard: SHARD } })),
    );
    const ctx = createExecutionContext();
    await worker.queue(batch, { ...env, DELIVERIES: queue }, ctx);
    await waitOnExecutionContext(ctx);
    next = putOff.filter((id) => ids.includes(id)); // not the health events the attempts made
  }
  vi.restoreAllMocks();
  return sent;
}

/** What the health subscription was told, oldest first: each event's body. */
async function told(healthId: string) {
  const rows = await db
    .prepare("select event, body, status, sequence from webhook_deliveries where subscription_id = ? order by created_at, sequence")
    .bind(healthId)
    .all<{ event: string; body: string; status: string; sequence: number }>();
  return rows.results.map((row) => ({ ...row, body: JSON.parse(row.body) as Record<string, unknown> }));
}

describe("failuresAfter", () => {
  it.each([
    ["no attempts: unchanged", 4, [], 4],
    ["failures only: added", 4, [false, false], 6],
    ["a success last: none", 4, [false, true], 0],
    ["failures after a success: counted from it", 9, [true, false, false], 2],
  ] as [string, number, boolean[], number][])("%s", (_name, before, succeeded, expected) => {
    expect(failuresAfter(before, succeeded)).toBe(expected);
  });
});

describe("operational events", () => {
  it("tell a receiver that fails, once, then that it recovered, once; never the subscription itself; delivered signed with hook-event", async () => {
    const { client } = await makeTenant({ shard: SHARD });
    const health = await subscribeUnanswered(client, "subscription.health");
    const other = await subscribeUnanswered(client, "subscription.health");
    const watched = await subscribeUnanswered(client);
    const ids = await Promise.all(Array.from({ length: FAILING_AFTER_ATTEMPTS + 3 }, () => pending(client, watched.id)));
    await consume(ids.slice(0, FAILING_AFTER_ATTEMPTS - 1), 500);
    expect(await told(health.id)).toEqual([]);
    await consume(ids.slice(FAILING_AFTER_ATTEMPTS - 1), 500);
    const failing = await told(health.id);
    expect(failing.map((row) => [row.event, row.body.object_id, row.sequence])).toEqual([["subscription.failing", watched.id, 1]]);
    expect(failing[0]!.body).toMatchObject({
      object_type: "subscription",
      object_id: watched.id,
      event: "subscription.failing",
      failing_since: expect.any(String),
    });
    // More failures tell nothing more.
    await consume([await pending(client, watched.id)], 500);
    expect(await told(health.id)).toHaveLength(1);
    // A success after failing: recovered, once.
    await consume([await pending(client, watched.id), await pending(client, watched.id)], 200);
    expect((await told(health.id)).map((row) => row.event)).toEqual(["subscription.failing", "subscription.recovered"]);
    // Each health subscription is told of the other's troubles, never of its own.
    expect((await told(other.id)).map((row) => row.body.object_id)).toEqual([watched.id, watched.id]);
    // The event goes out like any delivery: signed, with its name as hook-event and its sequence.
    const [row] = (
      await db.prepare("select id from webhook_deliveries where subscription_id = ? and event = 'subscription.recovered'").bind(health.id).all<{ id: string }>()
    ).results;
    expect(row!.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const [headers] = await consume([row!.id], 200);
    expect(headers).toMatchObject({ "hook-event": "subscription.recovered", "hook-sequence": "2", "hook-subscription": health.id });
    expect(headers!["webhook-signature"]).toMatch(/^v1,/);
    const log = await call("GET", `/v1/webhooks/${health.id}/deliveries/${row!.id}/`, { headers: client.headers });
    expect(log.json).toMatchObject({ event: "subscription.recovered", status: "succeeded", sequence: 2, payment_id: "" });
  });

  it("tell a receiver disabled by a 410, and hold its other deliveries", async () => {
    const { client } = await makeTenant({ shard: SHARD });
    const health = await subscribeUnanswered(client, "subscription.health");
    const watched = await subscribeUnanswered(client);
    const [gone, waiting] = [await pending(client, watched.id), await pending(client, watched.id)];
    await db
      .prepare("update webhook_deliveries set next_attempt_at = ? where id = ?")
      .bind(Date.now() + 3_600_000, waiting)
      .run();
    await consume([gone], 410);
    expect((await told(health.id)).map((row) => [row.event, row.body.reason])).toEqual([["subscription.disabled", "gone"]]);
    const subscription = await call("GET", `/v1/webhooks/${watched.id}/`, { headers: client.headers });
    expect(subscription.json.is_active).toBe(false);
    expect((await db.prepare("select status from webhook_deliveries where id = ?").bind(waiting).first<{ status: string }>())!.status).toBe("held");
  });

  it("tell a receiver that has failed for an hour, even with fewer than 10 failures in a row", async () => {
    const { client } = await makeTenant({ shard: SHARD });
    const health = await subscribeUnanswered(client, "subscription.health");
    const watched = await subscribeUnanswered(client);
    await db
      .prepare("update webhook_subscriptions set failing_since = ?, consecutive_failures = 1 where id = ?")
      .bind(Date.now() - 3_600_000 - 1000, watched.id)
      .run();
    await consume([await pending(client, watched.id)], 500);
    const events = await told(health.id);
    expect(events.map((row) => [row.event, row.body.object_id])).toEqual([["subscription.failing", watched.id]]);
  });

  it("tell a receiver disabled by 5 days of failures, and hold its other deliveries", async () => {
    const { client } = await makeTenant({ shard: SHARD });
    const health = await subscribeUnanswered(client, "subscription.health");
    const watched = await subscribeUnanswered(client);
    const [failing, waiting] = [await pending(client, watched.id), await pending(client, watched.id)];
    await db
      .prepare("update webhook_deliveries set next_attempt_at = ? where id = ?")
      .bind(Date.now() + 3_600_000, waiting)
      .run();
    await db
      .prepare("update webhook_subscriptions set failing_since = ?, failing_reported = 1, consecutive_failures = 40 where id = ?")
      .bind(Date.now() - 5 * 86_400_000 - 1000, watched.id)
      .run();
    await consume([failing], 500);
    expect((await told(health.id)).map((row) => [row.event, row.body.reason])).toEqual([["subscription.disabled", "failing"]]);
    expect((await call("GET", `/v1/webhooks/${watched.id}/`, { headers: client.headers })).json.is_active).toBe(false);
    expect((await db.prepare("select status from webhook_deliveries where id = ?").bind(waiting).first<{ status: string }>())!.status).toBe("held");
  });

  it("tell a delivery that ran out of retries", async () => {
    const { client } = await makeTenant({ shard: SHARD });
    const health = await subscribeUnanswered(client, "subscription.health");
    const watched = await subscribeUnanswered(client);
    const id = await pending(client, watched.id, { attempts: 10, startedAgoMs: 71 * 3_600_000 });
    await consume([id], 500);
    const events = await told(health.id);
    expect(events.map((row) => [row.event, row.body.delivery_id, row.body.payment_id])).toEqual([["delivery.exhausted", id, "pmt_x"]]);
  });

  it("are only for subscription.health subscriptions: a payment change makes them no delivery", async () => {
    const { client } = await makeTenant({ shard: SHARD });
    const health = await subscribeUnanswered(client, "subscription.health");
    expect(health.event).toBe("subscription.health");
    const { makePayment } = await import("../helpers/api");
    await makePayment(client);
    expect(await told(health.id)).toEqual([]);
  });
});
