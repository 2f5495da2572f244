import { createExecutionContext, createMessageBatch, env, waitOnExecutionContext } from "cloudflare:test";
import worker from "../../src/index";
import { describe, expect, it } from "vitest";
import { createDb } from "../../src/db/client";
import { applyRetention, DISCARDED_AT_ONCE, RELEASED_AT_ONCE } from "../../src/webhooks";
import { runCron } from "../../src/cron";
import type { DeliveryMessage } from "../../src/webhooks";
import { wholeList, call, makePayment, makeTenant, shardD1, shardOf as shardName, type User } from "../helpers/api";
import { allEnded, HOOK_USER, mailbox, receivedAt, subscribeToReceiver, waitFor, type Box } from "../helpers/webhooks";

// Holds instead of silent loss (docs/interface.md, "Holds").
type Row = { id: string; sequence: number | null; status: string; attempts: { number: number; response_status: number | null }[] };

const setActive = (user: User, id: string, active: boolean) => call("PATCH", `/v1/webhooks/${id}/`, { body: { is_active: active }, headers: user.headers });
const logOf = async (user: User, id: string, query = ""): Promise<{ count: number; results: Row[] }> =>
  (await wholeList(`/v1/webhooks/${id}/deliveries/?page_size=1000${query}`, user.headers)).json;
const statsOf = async (user: User, id: string) => (await call("GET", `/v1/webhooks/${id}/stats/`, { headers: user.headers })).json;

/** Every delivery the receiver got, by hook-delivery: how many times each, and their sequences in arrival order. */
async function arrivals(box: Box, expected: number) {
  const got = await waitFor(
    () => receivedAt(box),
    (list) => list.length >= expected,
  );
  const times = new Map<string, number>();
  for (const one of got) times.set(one.headers["hook-delivery"]!, (times.get(one.headers["hook-delivery"]!) ?? 0) + 1);
  return { got, times, sequences: got.map((one) => Number(one.headers["hook-sequence"])) };
}

describe("holds", () => {
  it("keeps every change made while a subscription is paused, held, and sends each once, in sequence order, when it is resumed", async () => {
    const { client } = await makeTenant();
    const { subscription, box } = await subscribeToReceiver(client);
    expect((await setActive(client, subscription.id, false)).status).toBe(200);
    for (let i = 0; i < 6; i++) await makePayment(client);
    const held = await logOf(client, subscription.id);
    expect(held.count).toBe(6);
    expect(held.results.every((row) => row.status === "held" && row.attempts.length === 0)).toBe(true);
    expect((await logOf(client, subscription.id, "&status=held")).count).toBe(6);
    expect((await logOf(client, subscription.id, "&status=pending")).count).toBe(0);
    expect((await statsOf(client, subscription.id)).held).toBe(6);
    expect(await receivedAt(box)).toEqual([]);

    expect((await setActive(client, subscription.id, true)).status).toBe(200);
    const { times, sequences } = await arrivals(box, 6);
    expect([...times.values()]).toEqual([1, 1, 1, 1, 1, 1]);
    expect([...sequences].sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6]);
    const sent = await waitFor(
      () => logOf(client, subscription.id),
      (log) => log.results.every((row) => row.status === "succeeded"),
    );
    expect(sent.results.map((row) => row.sequence)).toEqual([6, 5, 4, 3, 2, 1]);
    expect((await statsOf(client, subscription.id)).held).toBe(0);
  });

  it("loses nothing and sends nothing twice when it is resumed in the middle of a burst", async () => {
    const { client } = await makeTenant();
    const { subscription, box } = await subscribeToReceiver(client);
    await setActive(client, subscription.id, false);
    const burst = Array.from({ length: 12 }, (_, i) => (i === 6 ? setActive(client, subscription.id, true).then(() => null) : makePayment(client)));
    await Promise.all(burst);
    const { times, sequences } = await arrivals(box, 11);
    await allEnded(client, [subscription.id]);
    expect((await receivedAt(box)).length).toBe(11);
    expect([...times.values()].every((n) => n === 1)).toBe(true);
    expect([...sequences].sort((a, b) => a - b)).toEqual(Array.from({ length: 11 }, (_, i) => i + 1));
    const log = await waitFor(
      () => logOf(client, subscription.id),
      (l) => l.results.every((row) => row.status === "succeeded"),
    );
    expect(log.count).toBe(11);
  });

  it("holds a retry when the subscription is paused during its attempt, and sends it once resumed", async () => {
    const { client } = await makeTenant();
    const { subscription, box } = await subscribeToReceiver(client);
    // The receiver answers 500 then 200, each after 800 ms: the pause lands while the first is under way.
    await mailbox({ secret: subscription.secret, ...HOOK_USER, responses: [500, 200], delayMs: 800 }, box.path);
    await makePayment(client);
    await waitFor(
      () => receivedAt(box),
      (list) => list.length === 1,
    );
    await setActive(client, subscription.id, false);
    const [row] = (
      await waitFor(
        () => logOf(client, subscription.id),
        (l) => l.results[0]?.status !== "pending",
      )
    ).results;
    expect(row).toMatchObject({ status: "held", attempts: [{ number: 1, response_status: 500 }] }); // held: nothing sends it
    expect(await receivedAt(box)).toHaveLength(1);
    await setActive(client, subscription.id, true);
    const after = await waitFor(
      () => logOf(client, subscription.id),
      (l) => l.results[0]?.status === "succeeded",
    );
    expect(after.results[0]!.attempts.map((attempt) => attempt.response_status)).toEqual([500, 200]);
    expect(await receivedAt(box)).toHaveLength(2);
  });

  it("discards a paused subscription's held deliveries; its sequence goes on past them", async () => {
    const { client } = await makeTenant();
    const { subscription, box } = await subscribeToReceiver(client);
    await setActive(client, subscription.id, false);
    for (let i = 0; i < 3; i++) await makePayment(client);
    const discarded = await call("POST", `/v1/webhooks/${subscription.id}/held/discard/`, { headers: client.headers });
    expect(discarded.status).toBe(202);
    expect(discarded.json).toEqual({ discarded: 3 });
    expect((await logOf(client, subscription.id)).count).toBe(0);
    expect((await statsOf(client, subscription.id)).held).toBe(0);
    await setActive(client, subscription.id, true);
    await makePayment(client);
    const { sequences } = await arrivals(box, 1);
    expect(sequences).toEqual([4]);
  });

  /** `n` more held deliveries of a paused subscription, numbered on after its newest, one ms apart. */
  async function held(user: User, subscriptionId: string, n: number) {
    const shard = await shardD1(user.accountId);
    const from = Date.now() - n - 1000;
    await shard
      .prepare(
        `insert into webhook_deliveries (id, subscription_id, account_id, payment_id, body, status, attempts, sequence, created_at, updated_at)
         with recursive n(i) as (select 1 union all select i + 1 from n where i < ?1)
         select ?2 || '-' || i, ?2, ?3, 'pmt_held', '{}', 'held', 0, i, ?4 + i, ?4 + i from n`,
      )
      .bind(n, subscriptionId, user.accountId, from)
      .run();
    return shard;
  }
  const statusCounts = async (shard: D1Database, subscriptionId: string) =>
    Object.fromEntries(
      (
        await shard
          .prepare("select status, count(*) as n from webhook_deliveries where subscription_id = ? group by status")
          .bind(subscriptionId)
          .all<{ status: string; n: number }>()
      ).results.map((row) => [row.status, row.n]),
    );

  it(`releases at most ${RELEASED_AT_ONCE} held deliveries on a resume, oldest first, and the cron the rest, each once, in sequence order`, async () => {
    const { client } = await makeTenant();
    const { subscription } = await subscribeToReceiver(client);
    await setActive(client, subscription.id, false);
    const shard = await held(client, subscription.id, RELEASED_AT_ONCE + 200);
    const sent: string[] = [];
    const queue = {
      send: async (body: DeliveryMessage) => void sent.push(body.delivery_id),
      sendBatch: async (messages: { body: DeliveryMessage }[]) => void sent.push(...messages.map((m) => m.body.delivery_id)),
    } as unknown as Queue<DeliveryMessage>;
    const resumed = await call("PATCH", `/v1/webhooks/${subscription.id}/`, {
      body: { is_active: true },
      headers: client.headers,
      bindings: { DELIVERIES: queue },
    });
    expect(resumed.status).toBe(200);
    expect(await statusCounts(shard, subscription.id)).toEqual({ pending: RELEASED_AT_ONCE, held: 200 });
    expect(sent).toEqual(Array.from({ length: RELEASED_AT_ONCE }, (_, i) => `${subscription.id}-${i + 1}`));
    await runCron({ ...env, DELIVERIES: queue }, Date.now());
    expect(await statusCounts(shard, subscription.id)).toEqual({ pending: RELEASED_AT_ONCE + 200 });
    expect(sent).toEqual(Array.from({ length: RELEASED_AT_ONCE + 200 }, (_, i) => `${subscription.id}-${i + 1}`));
  });

  it(`settles what a feed reader acked and releases the rest across a resume and the cron, never pushing an acked one`, async () => {
    const { client } = await makeTenant();
    const { subscription } = await subscribeToReceiver(client);
    await setActive(client, subscription.id, false);
    const shard = await held(client, subscription.id, RELEASED_AT_ONCE + 300);
    // The reader acked through sequence 1,100 (as POST …/feed/ack/ keeps it).
    await shard.prepare("update webhook_subscriptions set feed_acked_sequence = 1100, feed_acked = 'x' where id = ?").bind(subscription.id).run();
    const sent: string[] = [];
    const queue = {
      send: async () => {},
      sendBatch: async (messages: { body: DeliveryMessage }[]) => void sent.push(...messages.map((m) => m.body.delivery_id)),
    } as unknown as Queue<DeliveryMessage>;
    await call("PATCH", `/v1/webhooks/${subscription.id}/`, { body: { is_active: true }, headers: client.headers, bindings: { DELIVERIES: queue } });
    await runCron({ ...env, DELIVERIES: queue }, Date.now());
    expect(await statusCounts(shard, subscription.id)).toEqual({ succeeded: 1100, pending: RELEASED_AT_ONCE + 300 - 1100 });
    expect(sent).toEqual(Array.from({ length: RELEASED_AT_ONCE + 300 - 1100 }, (_, i) => `${subscription.id}-${1101 + i}`));
  });

  it(`holds at most ${RELEASED_AT_ONCE} pending deliveries on a pause, oldest first; the consumer holds the rest as their messages come, none attempted`, async () => {
    const { client } = await makeTenant();
    const { subscription, box } = await subscribeToReceiver(client);
    const shard = await shardD1(client.accountId);
    const from = Date.now() - 60_000;
    // A backlog of due deliveries never handed over (a queue outage), then the pause.
    await shard
      .prepare(
        `insert into webhook_deliveries (id, subscription_id, account_id, payment_id, body, status, attempts, next_attempt_at, sequence, created_at, updated_at)
         with recursive n(i) as (select 1 union all select i + 1 from n where i < ?1)
         select ?2 || '-' || i, ?2, ?3, 'pmt_x', '{}', 'pending', 0, ?4 + i, i, ?4 + i, ?4 + i from n`,
      )
      .bind(RELEASED_AT_ONCE + 300, subscription.id, client.accountId, from)
      .run();
    expect((await setActive(client, subscription.id, false)).status).toBe(200);
    expect(await statusCounts(shard, subscription.id)).toEqual({ held: RELEASED_AT_ONCE, pending: 300 });
    const first = await shard
      .prepare("select min(sequence) as n from webhook_deliveries where subscription_id = ? and status = 'pending'")
      .bind(subscription.id)
      .first<{ n: number }>();
    expect(first!.n).toBe(RELEASED_AT_ONCE + 1);
    // The sweeper hands the rest to the queue; the consumer holds each it leases.
    const sent: string[] = [];
    const queue = {
      send: async () => {},
      sendBatch: async (messages: { body: DeliveryMessage }[]) => void sent.push(...messages.map((m) => m.body.delivery_id)),
    } as unknown as Queue<DeliveryMessage>;
    await runCron({ ...env, DELIVERIES: queue }, Date.now());
    expect(sent).toHaveLength(300);
    const shardOfAccount = await shardName(client.accountId);
    for (let start = 0; start < sent.length; start += 100) {
      const batch = createMessageBatch<DeliveryMessage>(
        "payments-deliveries",
        sent.slice(start, start + 100).map((id) => ({ id, timestamp: new Date(), attempts: 1, body: { delivery_id: id, shard: shardOfAccount } })),
      );
      const ctx = createExecutionContext();
      await worker.queue(batch, env, ctx);
      await waitOnExecutionContext(ctx);
    }
    expect(await statusCounts(shard, subscription.id)).toEqual({ held: RELEASED_AT_ONCE + 300 });
    expect(await receivedAt(box)).toHaveLength(0);
  });

  it(`discards at most ${DISCARDED_AT_ONCE} held deliveries a call, oldest first: called again, the rest`, async () => {
    const { client } = await makeTenant();
    const { subscription } = await subscribeToReceiver(client);
    await setActive(client, subscription.id, false);
    const shard = await held(client, subscription.id, DISCARDED_AT_ONCE + 5);
    const discard = () => call("POST", `/v1/webhooks/${subscription.id}/held/discard/`, { headers: client.headers });
    expect((await discard()).json).toEqual({ discarded: DISCARDED_AT_ONCE });
    const left = await shard
      .prepare("select min(sequence) as first from webhook_deliveries where subscription_id = ?")
      .bind(subscription.id)
      .first<{ first: number }>();
    expect(left!.first).toBe(DISCARDED_AT_ONCE + 1);
    expect((await discard()).json).toEqual({ discarded: 5 });
    expect((await discard()).json).toEqual({ discarded: 0 });
    expect(await statusCounts(shard, subscription.id)).toEqual({});
  });

  it("removes held deliveries older than RETENTION_DAYS, as ended ones, and keeps recent ones", async () => {
    const { client } = await makeTenant({ shard: "A" });
    const { subscription } = await subscribeToReceiver(client);
    await setActive(client, subscription.id, false);
    for (let i = 0; i < 2; i++) await makePayment(client);
    const [newer, older] = (await logOf(client, subscription.id)).results;
    const day = 86_400_000;
    await env
      .SHARD_A!.prepare("update webhook_deliveries set created_at = created_at - ?1, updated_at = updated_at - ?1 where id = ?2")
      .bind(40 * day, older!.id)
      .run();
    for (let run = 0; run < 20 && (await logOf(client, subscription.id)).count > 1; run++)
      await applyRetention(createDb(env.SHARD_A!), undefined, 30, Date.now());
    expect((await logOf(client, subscription.id)).results.map((row) => [row.id, row.status])).toEqual([[newer!.id, "held"]]);
  });

  it("refuses to discard for an active subscription (409), or one of another account (404)", async () => {
    const { client } = await makeTenant();
    const { subscription } = await subscribeToReceiver(client);
    const active = await call("POST", `/v1/webhooks/${subscription.id}/held/discard/`, { headers: client.headers });
    expect(active.status).toBe(409);
    expect(active.json).toEqual({ detail: expect.stringContaining("active") });
    const stranger = await makeTenant();
    const other = await call("POST", `/v1/webhooks/${subscription.id}/held/discard/`, { headers: stranger.client.headers });
    expect(other.status).toBe(404);
    expect(other.json).toEqual({ detail: "Not found." });
  });
});
