import { createExecutionContext, createMessageBatch, env, getQueueResult, waitOnExecutionContext } from "cloudflare:test";
import worker from "../../src/index";
import type { DeliveryMessage } from "../../src/webhooks";
import { describe, expect, it, vi } from "vitest";
import { call, makeCounterparty, makeInvoice, makeTenant, shardD1, type User } from "../helpers/api";
import { mailbox, receivedAt, subscribeToReceiver, waitFor, HOOK_USER, type Received } from "../helpers/webhooks";
import { behindOf, blockedSql, releaseNext, RUN_AT_MOST, waitsFor, type Ordered } from "../../src/webhooks/outbox/order";
import { countingD1 } from "../../src/db/counting-d1";
import { leaseRun, type DeliveryRow } from "../../src/webhooks/delivery/lease";
import { runsOf } from "../../src/webhooks/delivery/consumer";
import { recordAttempts } from "../../src/webhooks/delivery/record";
import { createDb } from "../../src/db/client";
import { webhookDeliveries } from "../../src/db/schema";
import { eq, sql } from "drizzle-orm";
import { LOST_AFTER_MS, sweepOutbox } from "../../src/webhooks/upkeep/sweeper";
import { continueMoves } from "../../src/services/moves";
import { ADMIN } from "../helpers/api";
import { recordingQueue } from "../helpers/cron";
import { recordingD1 } from "../helpers/recording-d1";

/** A payment's id in a delivery's body. */
const paymentOf = (received: Received) => (JSON.parse(received.body) as { object_id: string }).object_id;
const versionOf = (received: Received) => Number(received.headers["hook-payment-version"]);

/** `count` payments of one buyer and supplier, each with its own invoice, made by `user`. */
async function payments(user: User, count: number): Promise<string[]> {
  const [buyer, supplier] = await Promise.all([makeCounterparty(user, "buyer"), makeCounterparty(user, "supplier")]);
  const made: string[] = [];
  for (let i = 0; i < count; i += 20) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(20, count - i) }, async () => {
        const invoice = await makeInvoice(user, buyer.id, supplier.id);
        const res = await call("POST", "/v2/payments/", {
          body: { originating_counterparty_id: buyer.id, receiving_counterparty_id: supplier.id, invoice_ids: [invoice.id], payment_method: "ach" },
          headers: user.headers,
        });
        if (res.status !== 201) throw new Error(`payment: ${res.status}`);
        return res.json.id as string;
      }),
    );
    made.push(...batch);
  }
  return made;
}

/**
 * `count` ordered deliveries of one payment, pending and never attempted, numbered 1, 2, 3, …,
 * made a millisecond apart from `from`, each body naming the payment and its version; their ids.
 */
async function waitingDeliveries(d1: D1Database, subscriptionId: string, accountId: string, paymentId: string, count: number, from: number): Promise<string[]> {
  const ids = Array.from({ length: count }, () => crypto.randomUUID());
  await d1.batch(
    ids.map((id, i) =>
      d1
        .prepare(
          `insert into webhook_deliveries (id, subscription_id, account_id, payment_id, body, status, attempts, sequence, payment_version, ordered, next_attempt_at, enqueued_at, created_at, updated_at)
           values (?1, ?2, ?3, ?4, ?5, 'pending', 0, ?6, ?6, 1, ?7, ?7, ?7, ?7)`,
        )
        .bind(id, subscriptionId, accountId, paymentId, JSON.stringify({ object_id: paymentId, version: i + 1 }), i + 1, from + i),
    ),
  );
  return ids;
}

/**
 * A tenant on shard B with a `per_payment` subscription (its receiver answering 200) and `count`
 * waiting deliveries of `paymentId` (waitingDeliveries, from `from`); `done` deletes the
 * subscription, so that the sweeps of the tests after it find none of its rows.
 */
async function orderedPayment(paymentId: string, count: number, from: number) {
  const { client } = await makeTenant({ shard: "B" });
  const { subscription, box } = await subscribeToReceiver(client, { ordering: "per_payment" });
  const ids = await waitingDeliveries(env.SHARD_B!, subscription.id, client.accountId, paymentId, count, from);
  const done = async () => expect((await call("DELETE", `/v1/webhooks/${subscription.id}/`, { headers: client.headers })).status).toBe(204);
  return { client, subscription, box, ids, done };
}

/** A queue batch of one message, for the delivery `id` on shard B. */
const messageFor = (id: string) =>
  createMessageBatch<DeliveryMessage>("payments-deliveries", [{ id: `msg-${id}`, timestamp: new Date(), attempts: 1, body: { delivery_id: id, shard: "B" } }]);

/** How long the slow receiver of runBehindSlowOnes takes to answer. */
const SLOW_MS = 2000;

/**
 * A run behind a queue of slow attempts: a `per_payment` subscription with `count` waiting
 * deliveries of one payment, the first the oldest, and a subscription whose receiver answers after
 * SLOW_MS with 5 deliveries after it; both have been answering (an invocation starts all it
 * admits: lanes.ts). The batch holds the first's message and the 5 others'; in the start order the
 * first and four slow ones take the lanes, the fifth waits. SLOW_MS is long beside a local
 * attempt, so that what a test orders by it holds on a busy machine.
 */
async function runBehindSlowOnes(count: number) {
  const now = Date.now();
  const { client, subscription, box, ids: run, done: unsubscribe } = await orderedPayment(`pmt_${crypto.randomUUID()}`, count, now - 10_000);
  const ordered = { subscription, box };
  const slow = await subscribeToReceiver(client);
  await mailbox({ secret: slow.subscription.secret, ...HOOK_USER, delayMs: SLOW_MS }, slow.box.path);
  const d1 = env.SHARD_B!;
  for (const { subscription } of [ordered, slow])
    await d1.prepare("update webhook_subscriptions set recent_answers = 5, recent_since = ? where id = ?").bind(Date.now(), subscription.id).run();
  const others = await waitingDeliveries(d1, slow.subscription.id, client.accountId, `pmt_${crypto.randomUUID()}`, 5, now - 5_000);
  await d1
    .prepare(`update webhook_deliveries set ordered = 0 where id in (${others.map(() => "?").join(", ")})`)
    .bind(...others)
    .run();
  const batch = createMessageBatch<DeliveryMessage>(
    "payments-deliveries",
    [run[0]!, ...others].map((id) => ({ id: `msg-${id}`, timestamp: new Date(), attempts: 1, body: { delivery_id: id, shard: "B" } })),
  );
  const done = async () => {
    await unsubscribe();
    expect((await call("DELETE", `/v1/webhooks/${slow.subscription.id}/`, { headers: client.headers })).status).toBe(204);
  };
  return { ordered, slow, run, others, batch, done };
}

/** A first attempt of `delivery` that got a 200 at `now`, as the consumer hands it to recordAttempts. */
function succeeded(delivery: DeliveryRow, now: number) {
  return {
    delivery,
    result: { startedAt: now, durationMs: 5, responseStatus: 200, timedOut: false, error: null, excerpt: "", retryAfter: null, headers: null },
    outcome: {
      number: 1,
      status: "succeeded" as const,
      retryInSeconds: null,
      scheduleStartedAt: now,
      scheduleFirstAttempt: 1,
      failingSince: null,
      deactivate: false,
    },
  };
}

describe("ordering: per_payment", () => {
  it("delivers each payment's changes once each, in version order, from 8 concurrent writers over 200 payments, while one payment's receiver fails and the others flow", async () => {
    const { client, processor } = await makeTenant();
    const ids = await payments(client, 200);
    const failing = ids[0]!;
    const { subscription, box } = await subscribeToReceiver(client, { ordering: "per_payment" });
    expect(subscription.ordering).toBe("per_payment");
    await mailbox({ secret: subscription.secret, ...HOOK_USER, failing: `"object_id":"${failing}"` }, box.path);

    // 8 writers, each with its 25 payments, record 3 events on each, round by round.
    const writers = Array.from({ length: 8 }, (_, w) => ids.filter((_, i) => i % 8 === w));
    await Promise.all(
      writers.map(async (mine) => {
        for (let round = 1; round <= 3; round++)
          for (const id of mine) {
            const res = await call("POST", `/v2/payments/${id}/events`, {
              body: { event_code: `PU1${round}`, description: `Step ${round}` },
              headers: processor.headers,
            });
            expect(res.status).toBe(201);
          }
      }),
    );

    // Every other payment's 3 deliveries arrive while the failing one's first is still refused.
    const others = await waitFor(
      () => receivedAt(box),
      (got) => got.filter((r) => r.status === 200).length >= 199 * 3,
    );
    expect(others.filter((r) => r.status === 200 && paymentOf(r) === failing)).toEqual([]);
    // Its later two wait, unleased, for it.
    const stats = await waitFor(
      () => call("GET", `/v1/webhooks/${subscription.id}/stats/`, { headers: client.headers }),
      (res) => res.json.waiting_for_order === 2,
    );
    expect(stats.json.waiting_for_order).toBe(2);
    expect(others.filter((r) => paymentOf(r) === failing).every((r) => versionOf(r) === 2 && r.status === 503)).toBe(true);

    // The receiver recovers: the failing payment's first goes out on its next retry, then the others in order.
    await mailbox({ secret: subscription.secret, ...HOOK_USER }, box.path);
    const all = await waitFor(
      () => receivedAt(box),
      (got) => got.filter((r) => r.status === 200).length === 200 * 3,
    );
    const byPayment = new Map<string, Received[]>();
    for (const r of all) byPayment.set(paymentOf(r), [...(byPayment.get(paymentOf(r)) ?? []), r]);
    expect(byPayment.size).toBe(200);
    for (const [id, got] of byPayment) {
      const delivered = got.filter((r) => r.status === 200);
      // Each change once, in version order; the failing payment's refused attempts came first.
      expect(delivered.map(versionOf), id).toEqual([2, 3, 4]);
      expect(new Set(delivered.map((r) => r.headers["webhook-id"])).size).toBe(3);
      if (id !== failing) expect(got).toHaveLength(3);
      else expect(got.slice(0, -3).every((r) => r.status === 503 && versionOf(r) === 2)).toBe(true);
    }
    // Sequence numbers stay the subscription's: every one of 1..600 once.
    const sequences = all.filter((r) => r.status === 200).map((r) => Number(r.headers["hook-sequence"]));
    expect(new Set(sequences).size).toBe(600);
    expect(Math.max(...sequences)).toBe(600);
  });

  it("never leaves a payment's later deliveries waiting for ever when the consumer died mid-attempt: the sweep re-sends the lapsed one, and its end releases the next", async () => {
    const { client } = await makeTenant({ shard: "B" });
    const { subscription, box } = await subscribeToReceiver(client, { ordering: "per_payment" });
    const d1 = env.SHARD_B!;
    const now = Date.now();
    const body = (version: number) => JSON.stringify({ object_type: "payment", object_id: "pmt_crash", event: "payment.changed", version });
    const insert = (id: string, sequence: number, extra: string, values: unknown[]) =>
      d1
        .prepare(
          `insert into webhook_deliveries (id, subscription_id, account_id, payment_id, body, status, attempts, sequence, payment_version, ordered, next_attempt_at, enqueued_at, created_at, updated_at${extra})
           values (?1, ?2, ?3, 'pmt_crash', ?4, 'pending', ?5, ?6, ?6, 1, ?7, ?8, ?9, ?9${values.map((_, i) => `, ?${10 + i}`).join("")})`,
        )
        .bind(
          id,
          subscription.id,
          client.accountId,
          body(sequence),
          sequence === 1 ? 1 : 0,
          sequence,
          now - 200_000,
          now - 200_000,
          now - 300_000 + sequence,
          ...values,
        );
    // The first: its attempt started 3 minutes ago under a lease that lapsed, its worker gone. The second waits for it.
    const [first, second] = [crypto.randomUUID(), crypto.randomUUID()];
    await d1.batch([
      insert(first, 1, ", leased_until, lease_token, first_started_at, first_ended", [now - 150_000, "dead", now - 180_000, 0]),
      insert(second, 2, "", []),
    ]);
    const stats = await call("GET", `/v1/webhooks/${subscription.id}/stats/`, { headers: client.headers });
    expect(stats.json.waiting_for_order).toBe(1);
    expect(await sweepOutbox(createDb(d1), { queue: env.DELIVERIES, shard: "B" })).toBeGreaterThanOrEqual(1);
    const got = await waitFor(
      () => receivedAt(box),
      (list) => list.length === 2,
    );
    expect(got.map((r) => r.headers["webhook-id"])).toEqual([first, second]);
  });

  it("attempts a payment's next delivery in the invocation that ended the one before it, with no message through the queue", async () => {
    const { client } = await makeTenant({ shard: "B" });
    const { subscription, box } = await subscribeToReceiver(client, { ordering: "per_payment" });
    const d1 = env.SHARD_B!;
    const now = Date.now();
    const ids = [crypto.randomUUID(), crypto.randomUUID(), crypto.randomUUID()];
    await d1.batch(
      ids.map((id, i) =>
        d1
          .prepare(
            `insert into webhook_deliveries (id, subscription_id, account_id, payment_id, body, status, attempts, sequence, payment_version, ordered, next_attempt_at, enqueued_at, created_at, updated_at)
             values (?1, ?2, ?3, 'pmt_chain', ?4, 'pending', 0, ?5, ?5, 1, ?6, ?6, ?6, ?6)`,
          )
          .bind(id, subscription.id, client.accountId, JSON.stringify({ object_id: "pmt_chain", version: i + 1 }), i + 1, now - 1000 + i),
      ),
    );
    // All three messages in one batch: the later two wait at admission, and each end leases the next.
    const batch = createMessageBatch<DeliveryMessage>(
      "payments-deliveries",
      ids.map((id) => ({ id: `msg-${id}`, timestamp: new Date(), attempts: 1, body: { delivery_id: id, shard: "B" } })),
    );
    const sent: string[] = [];
    const queue = recordingQueue(sent);
    const ctx = createExecutionContext();
    await worker.queue(batch, { ...env, DELIVERIES: queue }, ctx);
    await waitOnExecutionContext(ctx);
    expect((await getQueueResult(batch, ctx)).retryMessages).toEqual([]);
    expect((await receivedAt(box)).map((r) => r.headers["webhook-id"])).toEqual(ids);
    expect(sent).toEqual([]);
    const rows = await d1.prepare("select status, attempts from webhook_deliveries where payment_id = 'pmt_chain' order by sequence").all();
    expect(rows.results).toEqual(ids.map(() => ({ status: "succeeded", attempts: 1 })));
  });

  it("attempts a payment's waiting deliveries one after another as a run, and gives back unattempted what follows one that fails", async () => {
    const { client, subscription, box, ids, done } = await orderedPayment("pmt_run", 5, Date.now() - 1000);
    await mailbox({ secret: subscription.secret, ...HOOK_USER, failing: '"version":3' }, box.path);
    const d1 = env.SHARD_B!;
    // The first's message only: its end leases the other four as a run, attempted in order until the third fails.
    const batch = messageFor(ids[0]!);
    const sent: string[] = [];
    const queue = recordingQueue(sent);
    const ctx = createExecutionContext();
    await worker.queue(batch, { ...env, DELIVERIES: queue }, ctx);
    await waitOnExecutionContext(ctx);
    expect((await receivedAt(box)).map((r) => [r.headers["webhook-id"], r.status])).toEqual([
      [ids[0], 200],
      [ids[1], 200],
      [ids[2], 503],
    ]);
    // The failed one's retry goes to the queue; the two after it were never attempted, and wait for it as before.
    expect(sent).toEqual([ids[2]]);
    const rows = await d1
      .prepare("select status, attempts, leased_until, lease_token, first_started_at from webhook_deliveries where payment_id = 'pmt_run' order by sequence")
      .all();
    expect(rows.results.map((row) => [row.status, row.attempts])).toEqual([
      ["succeeded", 1],
      ["succeeded", 1],
      ["pending", 1],
      ["pending", 0],
      ["pending", 0],
    ]);
    expect(rows.results.slice(3)).toEqual(
      Array.from({ length: 2 }, () => ({ status: "pending", attempts: 0, leased_until: null, lease_token: null, first_started_at: null })),
    );
    const stats = await call("GET", `/v1/webhooks/${subscription.id}/stats/`, { headers: client.headers });
    expect(stats.json.waiting_for_order).toBe(2);
    await done();
  });

  it("sends no message at the commit for a delivery made behind an earlier one of its payment: it is taken as handed over, and waits", async () => {
    const { client, processor } = await makeTenant({ shard: "B" });
    const [payment] = await payments(client, 1);
    const { subscription } = await subscribeToReceiver(client, { ordering: "per_payment" });
    const d1 = env.SHARD_B!;
    const now = Date.now();
    // An earlier delivery of the payment, its attempt under way.
    await d1
      .prepare(
        `insert into webhook_deliveries (id, subscription_id, account_id, payment_id, body, status, attempts, sequence, payment_version, ordered, next_attempt_at, enqueued_at, leased_until, lease_token, created_at, updated_at)
         values (?1, ?2, ?3, ?4, '{}', 'pending', 1, 0, 1, 1, ?5, ?5, ?6, 'busy', ?5, ?5)`,
      )
      .bind(crypto.randomUUID(), subscription.id, client.accountId, payment, now - 1000, now + 60_000)
      .run();
    const sent: string[] = [];
    const queue = recordingQueue(sent);
    const res = await call("POST", `/v2/payments/${payment}/events/`, {
      body: { event_code: "PU10", description: "Sent", status: "in-progress" },
      headers: processor.headers,
      bindings: { DELIVERIES: queue },
    });
    expect(res.status).toBe(201);
    const made = await d1
      .prepare("select id, status, enqueued_at from webhook_deliveries where subscription_id = ?1 and sequence = 1")
      .bind(subscription.id)
      .first<{ id: string; status: string; enqueued_at: number | null }>();
    expect(made?.status).toBe("pending");
    expect(made?.enqueued_at).not.toBeNull();
    expect(sent).not.toContain(made!.id);
    const stats = await call("GET", `/v1/webhooks/${subscription.id}/stats/`, { headers: client.headers });
    expect(stats.json.waiting_for_order).toBe(1);
    // Its rows go with it: the shard's sweeps in the tests after this one find none of them.
    expect((await call("DELETE", `/v1/webhooks/${subscription.id}/`, { headers: client.headers })).status).toBe(204);
  });

  it("chains only a next delivery never attempted: one attempted before keeps its own schedule", async () => {
    const { client } = await makeTenant({ shard: "B" });
    const { subscription } = await subscribeToReceiver(client, { ordering: "per_payment" });
    const d1 = env.SHARD_B!;
    const now = Date.now();
    const row = (id: string, payment: string, sequence: number, status: string, attempts: number) =>
      d1
        .prepare(
          `insert into webhook_deliveries (id, subscription_id, account_id, payment_id, body, status, attempts, sequence, payment_version, ordered, next_attempt_at, enqueued_at, created_at, updated_at)
           values (?1, ?2, ?3, ?4, '{}', ?5, ?6, ?7, ?7, 1, ?8, ?8, ?8, ?8)`,
        )
        .bind(id, subscription.id, client.accountId, payment, status, attempts, sequence, now - 60_000 + sequence);
    const [fresh, tried] = [crypto.randomUUID(), crypto.randomUUID()];
    await d1.batch([
      row(crypto.randomUUID(), "pmt_fresh", 1, "succeeded", 1),
      row(fresh, "pmt_fresh", 2, "pending", 0),
      row(crypto.randomUUID(), "pmt_tried", 3, "succeeded", 1),
      row(tried, "pmt_tried", 4, "pending", 2),
    ]);
    const runs = [
      { subscriptionId: subscription.id, paymentId: "pmt_fresh" },
      { subscriptionId: subscription.id, paymentId: "pmt_tried" },
    ];
    const leased = await leaseRun(createDb(d1), runs, "chain-token", now, 1_000_000);
    expect(leased.map((r) => [r.id, r.attempts])).toEqual([[fresh, 1]]);
    // Deleted after: the sweeps of the tests after this one find none of its rows.
    expect((await call("DELETE", `/v1/webhooks/${subscription.id}/`, { headers: client.headers })).status).toBe(204);
  });

  it("leases, with a payment's next delivery, those waiting behind it as its run: one message, one lease, one record for all", async () => {
    const { box, ids, done } = await orderedPayment("pmt_behind", 4, Date.now() - 1000);
    const d1 = env.SHARD_B!;
    const { db, statements } = recordingD1(d1);
    const batch = messageFor(ids[0]!);
    const sent: string[] = [];
    const ctx = createExecutionContext();
    await worker.queue(batch, { ...env, SHARD_B: db, DELIVERIES: recordingQueue(sent) }, ctx);
    await waitOnExecutionContext(ctx);
    expect((await receivedAt(box)).map((r) => [r.headers["webhook-id"], r.status])).toEqual(ids.map((id) => [id, 200]));
    expect(sent).toEqual([]);
    const rows = await d1.prepare("select status, attempts from webhook_deliveries where payment_id = 'pmt_behind' order by sequence").all();
    expect(rows.results).toEqual(ids.map(() => ({ status: "succeeded", attempts: 1 })));
    // The three behind the first were leased in the first's lease (beside its admission read, two
    // round trips), and the four attempts recorded by one statement of one batch.
    const recorded = statements.filter(({ sql }) => /^update "webhook_deliveries" set "status" = case/.test(sql));
    expect(recorded).toHaveLength(1);
    expect(JSON.parse(recorded[0]!.params.find((p) => typeof p === "string" && p.startsWith("[{"))! as string)).toHaveLength(4);
    await done();
  });

  it("leases a run behind a delivery only while its own lease holds that delivery", async () => {
    const now = Date.now();
    const { subscription, ids, done } = await orderedPayment("pmt_held", 3, now - 60_000);
    const [head, ...rest] = ids;
    const d1 = env.SHARD_B!;
    const start = behindOf({ subscriptionId: subscription.id, paymentId: "pmt_held", id: head!, sequence: 1 });
    // Not leased, or leased by another: nothing behind it is taken.
    expect(await leaseRun(createDb(d1), [start], "run-token", now, 1_000_000)).toEqual([]);
    await d1
      .prepare("update webhook_deliveries set leased_until = ?, lease_token = 'other-token' where id = ?")
      .bind(now + 60_000, head)
      .run();
    expect(await leaseRun(createDb(d1), [start], "run-token", now, 1_000_000)).toEqual([]);
    // Leased under the run's token: the two behind it, never itself.
    await d1.prepare("update webhook_deliveries set lease_token = 'run-token' where id = ?").bind(head).run();
    const leased = await leaseRun(createDb(d1), [start], "run-token", now, 1_000_000);
    expect(leased.map((row) => row.id).sort()).toEqual([...rest].sort());
    await done();
  });

  it("attempts a run's next delivery behind the attempts already queued, so that no lease lapses while its attempt waits for a lane", async () => {
    const { ordered, slow, run, others, batch, done } = await runBehindSlowOnes(3);
    const ctx = createExecutionContext();
    await worker.queue(batch, { ...env, DELIVERIES: recordingQueue([]) }, ctx);
    await waitOnExecutionContext(ctx);
    const received = await receivedAt(ordered.box);
    expect(received.map((r) => [r.headers["webhook-id"], r.status])).toEqual(run.map((id) => [id, 200]));
    const fifth = (await receivedAt(slow.box)).find((r) => r.headers["webhook-id"] === others[4]);
    // The fifth, queued when the head ended, started before the run went on, which waited for a lane.
    expect(fifth!.received_at).toBeLessThan(received[1]!.received_at);
    await done();
  });

  it("gives back, unattempted, the rest of a run whose turn for a lane comes too late for one more attempt, and releases it to the queue", async () => {
    const { ordered, slow, run, batch, done } = await runBehindSlowOnes(2);
    const [head, next] = run;
    const sent: string[] = [];
    const ctx = createExecutionContext();
    await worker.queue(batch, { ...env, DELIVERIES: recordingQueue(sent) }, ctx);
    // The fifth slow one started in the head's lane once the head succeeded: the rest of the run
    // now waits behind the slow ones (SLOW_MS each), and the invocation's time runs out (the
    // clock moved a minute on).
    await waitFor(
      () => receivedAt(slow.box),
      (got) => got.length === 5,
    );
    const real = Date.now.bind(Date);
    const clock = vi.spyOn(Date, "now").mockImplementation(() => real() + 60_000);
    try {
      await waitOnExecutionContext(ctx);
    } finally {
      clock.mockRestore();
    }
    expect((await receivedAt(ordered.box)).map((r) => r.headers["webhook-id"])).toEqual([head]);
    const rows = await env
      .SHARD_B!.prepare("select id, status, attempts, lease_token, first_started_at from webhook_deliveries where id in (?, ?) order by sequence")
      .bind(head, next)
      .all();
    expect(rows.results).toEqual([
      { id: head, status: "succeeded", attempts: 1, lease_token: null, first_started_at: expect.any(Number) },
      { id: next, status: "pending", attempts: 0, lease_token: null, first_started_at: null },
    ]);
    expect(sent).toContain(next);
    await done();
  });

  it("leases a run of 8 at most, reading no more of a payment's waiting deliveries however many wait", async () => {
    const now = Date.now();
    const { subscription, ids: waiting, done } = await orderedPayment("pmt_many", 300, now - 60_000);
    const { db, tally } = countingD1(env.SHARD_B!);
    const leased = await leaseRun(createDb(db), [{ subscriptionId: subscription.id, paymentId: "pmt_many" }], "run-token", now, 1_000_000);
    expect([...leased].sort((a, b) => a.sequence! - b.sequence!).map((row) => row.id)).toEqual(waiting.slice(0, RUN_AT_MOST));
    // The run's 8 candidates and what each lease reads beside them, never the 300.
    expect(tally.rowsRead).toBeLessThan(150);
    await done();
  });

  it("releases to the queue at once a next delivery the chained lease could not take (its body past what the invocation has left)", async () => {
    const { client } = await makeTenant({ shard: "B" });
    const { subscription } = await subscribeToReceiver(client, { ordering: "per_payment" });
    const d1 = env.SHARD_B!;
    const now = Date.now();
    const row = (id: string, sequence: number, lease: string | null) =>
      d1
        .prepare(
          `insert into webhook_deliveries (id, subscription_id, account_id, payment_id, body, status, attempts, sequence, payment_version, ordered, next_attempt_at, enqueued_at, leased_until, lease_token, created_at, updated_at)
           values (?1, ?2, ?3, 'pmt_large', '{"object_id":"pmt_large"}', 'pending', ?4, ?5, ?5, 1, ?6, ?6, ?7, ?8, ?6, ?6)`,
        )
        .bind(id, subscription.id, client.accountId, lease ? 1 : 0, sequence, now - 60_000 + sequence, lease ? now + 30_000 : null, lease);
    const [ending, next] = [crypto.randomUUID(), crypto.randomUUID()];
    await d1.batch([row(ending, 1, "ending-token"), row(next, 2, null)]);
    const db = createDb(d1);
    const delivery = (await db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, ending)).get())!;
    const sent: string[] = [];
    const queue = recordingQueue(sent);
    const attempted = succeeded(delivery, now);
    // A free lane, but 1 byte of bodies left: the next one is not leased here.
    const chained = await recordAttempts(db, { queue, shard: "B" }, [attempted], { lanes: 1, bodyBytes: 1 });
    expect(chained).toEqual([]);
    expect(sent).toEqual([next]);
    expect((await call("DELETE", `/v1/webhooks/${subscription.id}/`, { headers: client.headers })).status).toBe(204);
  });

  it("hands to the queue at once what a run leaves for lack of time: given back unattempted, then released", async () => {
    const now = Date.now();
    const { ids, done } = await orderedPayment("pmt_late", 3, now - 60_000);
    const [ended, ...rest] = ids;
    const d1 = env.SHARD_B!;
    // The first attempted under its run's lease; the two after it leased by the run, not reached.
    await d1
      .prepare(
        "update webhook_deliveries set attempts = 1, leased_until = ?1, lease_token = 'run-token', first_started_at = ?2, first_ended = 0 where payment_id = 'pmt_late'",
      )
      .bind(now + 60_000, now)
      .run();
    const db = createDb(d1);
    const rows = await db.select().from(webhookDeliveries).where(eq(webhookDeliveries.paymentId, "pmt_late")).orderBy(webhookDeliveries.sequence);
    const attempted = { ...succeeded(rows[0]!, now), handsOn: false, givenBack: rows.slice(1) };
    const sent: string[] = [];
    // No lane and no time left: nothing is chained.
    expect(await recordAttempts(db, { queue: recordingQueue(sent), shard: "B" }, [attempted], { lanes: 0, bodyBytes: 0 })).toEqual([]);
    expect(sent).toEqual([rest[0]]);
    const after = await d1
      .prepare("select id, status, attempts, lease_token, first_started_at from webhook_deliveries where payment_id = 'pmt_late' order by sequence")
      .all();
    expect(after.results).toEqual([
      { id: ended, status: "succeeded", attempts: 1, lease_token: null, first_started_at: now },
      { id: rest[0], status: "pending", attempts: 0, lease_token: null, first_started_at: null },
      { id: rest[1], status: "pending", attempts: 0, lease_token: null, first_started_at: null },
    ]);
    await done();
  });

  it("compares no delivery's status to a bound value in a run, its give-back and its release: SQLite would prepare each such statement twice", async () => {
    const { subscription, box, ids, done } = await orderedPayment("pmt_bound", 5, Date.now() - 1000);
    await mailbox({ secret: subscription.secret, ...HOOK_USER, failing: '"version":3' }, box.path);
    const d1 = env.SHARD_B!;
    const { db, statements } = recordingD1(d1);
    const batch = messageFor(ids[0]!);
    const ctx = createExecutionContext();
    await worker.queue(batch, { ...env, SHARD_B: db, DELIVERIES: recordingQueue([]) }, ctx);
    await waitOnExecutionContext(ctx);
    expect((await receivedAt(box)).map((r) => r.status)).toEqual([200, 200, 503]);
    // The time-cut record: a give-back and a release.
    const rows = await createDb(d1).select().from(webhookDeliveries).where(eq(webhookDeliveries.paymentId, "pmt_bound")).orderBy(webhookDeliveries.sequence);
    await recordAttempts(createDb(db), { queue: recordingQueue([]), shard: "B" }, [
      { ...succeeded(rows[2]!, Date.now()), handsOn: false, givenBack: rows.slice(3) },
    ]);
    const delivering = statements.map(({ sql }) => sql).filter((sql) => /webhook_deliveries/.test(sql));
    // The run's lease, the give-back and the release were among them.
    for (const part of [/row_number\(\) over/, /json_extract\(value, '\$\[1\]'\)/, /^update "webhook_deliveries" set "enqueued_at" = \? where/])
      expect(delivering.some((sql) => part.test(sql))).toBe(true);
    expect(delivering.filter((sql) => /\b(where|and|or|\()\s*("?\w+"?\.)?"?status"?\s*(=|<>|!=|in)\s*\(?\s*\?/i.test(sql))).toEqual([]);
    await done();
  });

  it("leaves a released delivery to the sweeper when the worker dies between the end of the one before it and the send", async () => {
    const { client } = await makeTenant({ shard: "B" });
    const { subscription } = await subscribeToReceiver(client, { ordering: "per_payment" });
    const d1 = env.SHARD_B!;
    const now = Date.now();
    const row = (id: string, sequence: number, status: string) =>
      d1
        .prepare(
          `insert into webhook_deliveries (id, subscription_id, account_id, payment_id, body, status, attempts, sequence, payment_version, ordered, next_attempt_at, enqueued_at, created_at, updated_at)
           values (?1, ?2, ?3, 'pmt_died', '{}', ?4, 0, ?5, ?5, 1, ?6, ?6, ?6, ?6)`,
        )
        .bind(id, subscription.id, client.accountId, status, sequence, now - 3 * 3_600_000 + sequence);
    const [ended, next] = [crypto.randomUUID(), crypto.randomUUID()];
    await d1.batch([row(ended, 1, "succeeded"), row(next, 2, "pending")]);
    // The record batch's part: the next one marked handed over. Its send never happens.
    const db = createDb(d1);
    expect(await releaseNext(db, [{ subscriptionId: subscription.id, paymentId: "pmt_died" }], now)).toEqual([{ id: next }]);
    const sent: string[] = [];
    const queue = recordingQueue(sent);
    // Within minutes the sweeper takes it for lost and sends it.
    await sweepOutbox(db, { queue, shard: "B" }, now + 1000);
    expect(sent).toEqual([]);
    await sweepOutbox(db, { queue, shard: "B" }, now + LOST_AFTER_MS + 1000);
    expect(sent).toEqual([next]);
  });

  it("keeps a payment's order across a move of its account: what waited on the old shard goes out in order from the new one", async () => {
    const { client, processor, account } = await makeTenant({ shard: "A" });
    const [payment] = await payments(client, 1);
    const { subscription, box } = await subscribeToReceiver(client, { ordering: "per_payment" });
    await mailbox({ secret: subscription.secret, ...HOOK_USER, failing: `"object_id":"${payment}"` }, box.path);
    for (let round = 1; round <= 3; round++) {
      const res = await call("POST", `/v2/payments/${payment}/events`, {
        body: { event_code: `PU1${round}`, description: `Step ${round}` },
        headers: processor.headers,
      });
      expect(res.status).toBe(201);
    }
    await waitFor(
      () => receivedAt(box),
      (list) => list.length >= 1,
    );
    // The move, to its end, while the first is refused and the two after it wait.
    expect((await call("POST", `/admin/accounts/${account.id}/move/`, { body: { shard: "B" }, headers: ADMIN })).status).toBe(202);
    for (let i = 0; (await call("GET", `/admin/accounts/${account.id}/`, { headers: ADMIN })).json.move !== null; i++) {
      expect(i).toBeLessThan(100);
      await continueMoves(createDb(env.DB), env, { budgetMs: 50 });
    }
    await mailbox({ secret: subscription.secret, ...HOOK_USER }, box.path);
    // On B the sweep hands over what is due; each ending releases the next.
    const got = await waitFor(
      async () => {
        await sweepOutbox(createDb(env.SHARD_B!), { queue: env.DELIVERIES, shard: "B" });
        return receivedAt(box);
      },
      (list) => list.filter((r) => r.status === 200).length === 3,
    );
    const delivered = got.filter((r) => r.status === 200);
    expect(delivered.map(versionOf)).toEqual([2, 3, 4]);
    expect(got.filter((r) => r.status === 503).every((r) => versionOf(r) === 2)).toBe(true);
  });

  it("keeps no order for a subscription that does not ask for it, and applies a change of it to later deliveries", async () => {
    const { client } = await makeTenant();
    const { subscription } = await subscribeToReceiver(client);
    expect(subscription.ordering).toBe("none");
    const patched = await call("PATCH", `/v1/webhooks/${subscription.id}/`, { body: { ordering: "per_payment" }, headers: client.headers });
    expect(patched.json.ordering).toBe("per_payment");
    const [payment] = await payments(client, 1);
    const d1 = await shardD1(client.accountId);
    const row = await d1.prepare("select ordered from webhook_deliveries where payment_id = ?").bind(payment).first<{ ordered: number }>();
    expect(row?.ordered).toBe(1);
    const back = await call("PUT", `/v1/webhooks/${subscription.id}/`, {
      body: { event: "payment.changed", url: subscription.url, content_type: "application/json", ...HOOK_USER },
      headers: client.headers,
    });
    expect(back.json.ordering).toBe("none");
  });

  it.each([
    ["another value", { ordering: "fifo" }, "ordering"],
    ["a number", { ordering: 1 }, "ordering"],
    ["a negative lag alert", { lag_alert_ms: -1 }, "lag_alert_ms"],
    ["an absurd lag alert", { lag_alert_ms: 10 ** 12 }, "lag_alert_ms"],
    ["a lag alert that is not a whole number", { lag_alert_ms: 1.5 }, "lag_alert_ms"],
  ])("refuses %s with a 400 keyed by the field", async (_name, fields, key) => {
    const { client } = await makeTenant();
    const res = await call("POST", "/v1/webhooks/", {
      body: { event: "payment.changed", url: "http://127.0.0.1:9/hooks", content_type: "application/json", ...HOOK_USER, ...fields },
      headers: client.headers,
    });
    expect(res.status).toBe(400);
    expect(Object.keys(res.json)).toEqual([key]);
  });
});

describe("the runs among leased rows (consumer.ts runsOf)", () => {
  const row = (id: string, subscriptionId: string, paymentId: string, sequence: number) => ({ id, subscriptionId, paymentId, sequence }) as DeliveryRow;
  it.each([
    ["none", [], []],
    ["one payment's, out of order", [row("c", "s", "p", 9), row("a", "s", "p", 2), row("b", "s", "p", 5)], [["a", "b", "c"]]],
    [
      "two payments of one subscription, and one payment's on two subscriptions",
      [row("a", "s", "p", 1), row("b", "s", "q", 2), row("c", "t", "p", 1), row("d", "s", "p", 3)],
      [["a", "d"], ["b"], ["c"]],
    ],
  ] as [string, DeliveryRow[], string[][]][])("%s", (_, rows, runs) => {
    expect(runsOf(rows).map((run) => run.map((r) => r.id))).toEqual(runs);
  });
});

describe("the order rule: waitsFor and its SQL agree", () => {
  // [case, the later delivery, the others of the log]
  const base: Ordered = { subscriptionId: "s1", paymentId: "p1", sequence: 5, ordered: true, status: "pending" };
  const cases: [string, Ordered, Ordered[], boolean][] = [
    ["an earlier pending one of its payment", base, [{ ...base, sequence: 4 }], true],
    ["an earlier held one", base, [{ ...base, sequence: 2, status: "held" }], true],
    ["an earlier one that succeeded", base, [{ ...base, sequence: 4, status: "succeeded" }], false],
    ["an earlier one that failed", base, [{ ...base, sequence: 4, status: "failed" }], false],
    ["a later pending one", base, [{ ...base, sequence: 6 }], false],
    ["another payment's", base, [{ ...base, paymentId: "p2", sequence: 4 }], false],
    ["another subscription's", base, [{ ...base, subscriptionId: "s2", sequence: 4 }], false],
    ["an earlier one not ordered (redelivered)", base, [{ ...base, sequence: 4, ordered: false }], false],
    ["itself not ordered", { ...base, ordered: false }, [{ ...base, sequence: 4 }], false],
    [
      "several, one holding it",
      base,
      [
        { ...base, sequence: 1, status: "succeeded" },
        { ...base, sequence: 3 },
        { ...base, sequence: 7 },
      ],
      true,
    ],
  ];

  it.each(cases)("%s", async (_name, later, others, expected) => {
    expect(others.some((earlier) => waitsFor(later, earlier))).toBe(expected);
    // The same rows on a shard, and the SQL's verdict for `later`.
    const { client } = await makeTenant({ shard: "A" });
    const subscriptions = new Map<string, string>();
    for (const name of new Set([later, ...others].map((row) => row.subscriptionId))) {
      const res = await call("POST", "/v1/webhooks/", {
        body: { event: "payment.changed", url: "http://127.0.0.1:9/hooks", content_type: "application/json", ...HOOK_USER, is_active: false },
        headers: client.headers,
      });
      subscriptions.set(name, res.json.id);
    }
    const d1 = env.SHARD_A!;
    const insert = (row: Ordered, id: string) =>
      d1
        .prepare(
          "insert into webhook_deliveries (id, subscription_id, account_id, payment_id, body, status, attempts, sequence, ordered, created_at, updated_at) values (?, ?, ?, ?, '{}', ?, 0, ?, ?, ?, ?)",
        )
        .bind(id, subscriptions.get(row.subscriptionId), client.accountId, row.paymentId, row.status, row.sequence, row.ordered ? 1 : 0, row.sequence, 1);
    const laterId = crypto.randomUUID();
    await d1.batch([insert(later, laterId), ...others.map((row) => insert(row, crypto.randomUUID()))]);
    const db = createDb(d1);
    const [verdict] = await db
      .select({ blocked: sql<number>`${blockedSql(webhookDeliveries)}`.mapWith(Boolean) })
      .from(webhookDeliveries)
      .where(eq(webhookDeliveries.id, laterId));
    expect(verdict!.blocked).toBe(expected);
  });
});
