import { createExecutionContext, createMessageBatch, createScheduledController, env, getQueueResult, waitOnExecutionContext } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import worker from "../../src/index";
import { NOT_CONFIGURED_RETRY_SECONDS } from "../../src/webhooks/delivery/consumer";
import { BACKOFF_MIN_TIMEOUTS, BACKOFF_MS, IN_FLIGHT_CAP, PROBE_CAP, SLOW_MS } from "../../src/webhooks/delivery/admission";
import { ATTEMPT_TIMEOUT_MS } from "../../src/webhooks/wire/retry-schedule";
import { SIMULTANEOUS_CONNECTIONS } from "../../src/lib/platform-limits";
import { ATTEMPTS_AT_ONCE, OVERFLOW_DELAY_MS, UNPROVEN_AT_ONCE } from "../../src/webhooks/delivery/lanes";
import { pageBounds } from "../../src/lib/list-bounds";
import { LOST_AFTER_MS, sweepOutbox } from "../../src/webhooks/upkeep/sweeper";
import { LEASE_MS } from "../../src/webhooks/wire/retry-schedule";
import { BASE, call, makePayment, makeTenant } from "../helpers/api";
import { createDb } from "../../src/db/client";
import type { DeliveryMessage } from "../../src/webhooks";
import { allEnded, HOOK_USER, receivedAt, receiverUrl, subscribeToReceiver, waitFor } from "../helpers/webhooks";

// The consumer's tests keep their tenants on one shard (not the first), and name it in every
// message as the service does; a batch that spans shards has its own test.
const SHARD = "B";
const db = env.SHARD_B!;

afterEach(() => {
  vi.restoreAllMocks();
});

/** A subscription on the receiver and one pending delivery row for it, already "handed over" so the sweeper leaves it alone. */
async function pendingDelivery(responses?: number[], fields: Record<string, unknown> = {}, rowOverrides: Record<string, unknown> = {}) {
  const { client } = await makeTenant({ shard: SHARD });
  const { subscription, box } = await subscribeToReceiver(client, fields, responses);
  const id = crypto.randomUUID();
  const now = Date.now();
  const row = { next_attempt_at: now, enqueued_at: now, status: "pending", attempts: 0, ...rowOverrides };
  await db
    .prepare(
      `insert into webhook_deliveries (id, subscription_id, account_id, payment_id, body, status, attempts, next_attempt_at, schedule_started_at, enqueued_at, leased_until, created_at, updated_at)
     values (?, ?, ?, 'pmt_test', ?, ?, ?, ?, null, ?, null, ?, ?)`,
    )
    .bind(
      id,
      subscription.id,
      client.accountId,
      JSON.stringify({ object_type: "payment", object_id: "pmt_test", event: "payment.changed" }),
      row.status,
      row.attempts,
      row.next_attempt_at,
      row.enqueued_at,
      now,
      now,
    )
    .run();
  return { client, subscription, box, id };
}

/** A stand-in for the DELIVERIES queue that keeps what is sent to it (retries go back as new, delayed messages). */
function recordingQueue() {
  const sent: { id: string; delaySeconds: number }[] = [];
  const keep = (message: { body: { delivery_id: string }; delaySeconds?: number }) =>
    sent.push({ id: message.body.delivery_id, delaySeconds: message.delaySeconds ?? 0 });
  const queue = {
    send: async (body: { delivery_id: string }, options?: { delaySeconds?: number }) => void keep({ body, delaySeconds: options?.delaySeconds }),
    sendBatch: async (messages: { body: { delivery_id: string }; delaySeconds?: number }[]) => void messages.forEach(keep),
  } as unknown as Queue<DeliveryMessage>;
  return { queue, sent };
}

/**
 * Runs the Worker's queue handler on messages, and then the attempts it left running. Says which
 * messages were acked or retried (with the delay each retry asked for), and what went back to
 * the queue for later (`requeued`: retries on the schedule, and deliveries put off).
 */
async function consumeAll(deliveryIds: string[], queue = "payments-deliveries", bindings: Partial<typeof env> = {}) {
  const batch = createMessageBatch<DeliveryMessage>(
    queue,
    deliveryIds.map((id, i) => ({ id: `msg-${id}${i ? `-${i}` : ""}`, timestamp: new Date(), attempts: 1, body: { delivery_id: id, shard: SHARD } })),
  );
  const retries = batch.messages.map((message) => vi.spyOn(message, "retry"));
  const { queue: deliveries, sent } = recordingQueue();
  const ctx = createExecutionContext();
  await worker.queue(batch, { ...env, DELIVERIES: deliveries, ...bindings }, ctx);
  await waitOnExecutionContext(ctx);
  const result = await getQueueResult(batch, ctx);
  const delays = retries.flatMap((spy) => spy.mock.calls.map(([options]) => options?.delaySeconds));
  return { ...result, retryMessages: result.retryMessages.map((m: { msgId: string }, i: number) => ({ ...m, delaySeconds: delays[i] })), requeued: sent };
}
const consume = (deliveryId: string, queue?: string, bindings?: Partial<typeof env>) => consumeAll([deliveryId], queue, bindings);

/**
 * Runs the consumer on `ids`, then again on what it put off for a moment (past an invocation's
 * share of unproven attempts or bodies: lanes.ts), until nothing is; returns each round's result.
 */
async function consumeUntilDone(ids: string[]) {
  const rounds = [];
  for (let round = 0, next = ids; round < 20 && next.length > 0; round++) {
    const result = await consumeAll(next);
    rounds.push(result);
    next = result.requeued.filter((one: { delaySeconds: number }) => one.delaySeconds <= OVERFLOW_DELAY_MS / 1000).map((one: { id: string }) => one.id);
  }
  return rounds;
}

/**
 * A fetch that holds every request until the test answers it: `answers` in the order they came,
 * `asked(n)` resolves once n requests are held (the consumer's attempts are under way).
 */
function heldFetch() {
  const answers: ((response: Response) => void)[] = [];
  const waiting: { n: number; done: () => void }[] = [];
  const spy = vi.spyOn(globalThis, "fetch").mockImplementation(
    () =>
      new Promise<Response>((resolve) => {
        answers.push(resolve);
        for (const waiter of waiting) if (answers.length >= waiter.n) waiter.done();
      }),
  );
  const asked = (n = 1) => new Promise<void>((done) => (answers.length >= n ? done() : waiting.push({ n, done })));
  return { answers, asked, spy };
}

/** One more pending delivery of a subscription, due now. */
async function extraDelivery(accountId: string, subscriptionId: string): Promise<string> {
  const id = crypto.randomUUID();
  const now = Date.now();
  await db
    .prepare(
      `insert into webhook_deliveries (id, subscription_id, account_id, payment_id, body, status, attempts, next_attempt_at, schedule_started_at, enqueued_at, leased_until, created_at, updated_at)
     values (?, ?, ?, 'pmt_test', '{"object_id":"pmt_test"}', 'pending', 0, ?, null, ?, null, ?, ?)`,
    )
    .bind(id, subscriptionId, accountId, now, now, now, now)
    .run();
  return id;
}

/** Makes `ids` one ms apart in age, oldest first, as deliveries made one after another are. */
async function oneAfterAnother(ids: string[]): Promise<void> {
  const start = Date.now() - ids.length;
  await db.batch(ids.map((id, i) => db.prepare("update webhook_deliveries set created_at = ? where id = ?").bind(start + i, id)));
}

const deliveryRow = (id: string) => db.prepare("select * from webhook_deliveries where id = ?").bind(id).first<Record<string, any>>();
/** The attempts stored for deliveries, as columns: a first attempt on its delivery's row, later ones in webhook_attempts. */
const STORED_ATTEMPTS = `select id as delivery_id, 1 as number, first_started_at as started_at, first_duration_ms as duration_ms,
    first_response_status as response_status, first_error as error, first_response_excerpt as response_excerpt, first_ended as ended, first_headers as headers
  from webhook_deliveries where first_started_at is not null
  union all select delivery_id, number, started_at, duration_ms, response_status, error, response_excerpt, ended, headers from webhook_attempts`;
const storedAttempts = (ids: string[]) =>
  db
    .prepare(`select * from (${STORED_ATTEMPTS}) where delivery_id in (select value from json_each(?)) order by delivery_id, number`)
    .bind(JSON.stringify(ids))
    .all<Record<string, any>>()
    .then((r) => r.results);
const attemptRows = (id: string) => storedAttempts([id]);
const subscriptionRow = (id: string) => db.prepare("select * from webhook_subscriptions where id = ?").bind(id).first<Record<string, any>>();

describe("the delivery consumer", () => {
  it("acks a delivery the receiver takes, and records the attempt", async () => {
    const { id, box, subscription } = await pendingDelivery([200]);
    const result = await consume(id);
    expect(result.explicitAcks).toEqual([`msg-${id}`]);
    expect(result.retryMessages).toEqual([]);
    expect(result.requeued).toEqual([]);
    expect((await deliveryRow(id))!).toMatchObject({ status: "succeeded", attempts: 1, next_attempt_at: null, leased_until: null });
    const [attempt] = await attemptRows(id);
    expect(attempt).toMatchObject({ number: 1, response_status: 200, error: null });
    expect(attempt!.duration_ms).toBeGreaterThanOrEqual(0);
    const [got] = await receivedAt(box);
    expect(got!.headers).toMatchObject({
      "hook-subscription": subscription.id,
      "hook-delivery": id,
      "webhook-id": id,
      "hook-event": "payment.changed",
      "content-type": "application/json",
    });
    expect(Math.abs(Number(got!.headers["webhook-timestamp"]) - Date.now() / 1000)).toBeLessThan(60);
    expect(got!.headers["user-agent"]).toMatch(/^payments-webhooks\//);
    expect(got!.verified).toEqual({ basic: true, hmac: true, standard: true, kit: true });
  });

  it("starts a batch's attempts in log order, whatever order its messages came in (a released hold goes out oldest first)", async () => {
    const { client, subscription, id: first } = await pendingDelivery();
    const later = [
      await extraDelivery(client.accountId, subscription.id),
      await extraDelivery(client.accountId, subscription.id),
      await extraDelivery(client.accountId, subscription.id),
    ];
    const inLog = [first, ...later];
    await oneAfterAnother(inLog);
    const started: string[] = [];
    vi.spyOn(globalThis, "fetch").mockImplementation(async (_url, init) => {
      started.push((init!.headers as Record<string, string>)["hook-delivery"]!);
      return new Response("ok");
    });
    const result = await consumeAll([...inLog].reverse());
    expect(result.explicitAcks).toHaveLength(4);
    expect(started).toEqual(inLog);
  });

  it("gets every delivery of a healthy subscription through on its first attempt beside 7 hanging ones, never holding more connections than a Worker has", async () => {
    const hanging = await Promise.all(Array.from({ length: 7 }, () => pendingDelivery(undefined, { url: `${receiverUrl()}/hang/${crypto.randomUUID()}` })));
    const healthy = await pendingDelivery([200, 200, 200]);
    const healthyIds = [
      healthy.id,
      await extraDelivery(healthy.client.accountId, healthy.subscription.id),
      await extraDelivery(healthy.client.accountId, healthy.subscription.id),
    ];
    // The hanging subscriptions' deliveries are the oldest: their attempts start first.
    await oneAfterAnother([...hanging.map((h) => h.id), ...healthyIds]);
    const log = vi.spyOn(console, "warn");
    // None of them has answered yet: an invocation starts UNPROVEN_AT_ONCE of theirs, and puts off the rest a moment.
    const rounds = await consumeUntilDone([...hanging.map((h) => h.id), ...healthyIds]);
    expect(rounds[0]!.explicitAcks).toHaveLength(10);
    expect(rounds.length).toBeGreaterThan(1);
    for (const id of healthyIds) expect((await deliveryRow(id))!).toMatchObject({ status: "succeeded", attempts: 1 });
    expect(await receivedAt(healthy.box)).toHaveLength(3);
    for (const { id } of hanging) {
      expect((await deliveryRow(id))!).toMatchObject({ status: "pending", attempts: 1, leased_until: null });
      expect((await attemptRows(id))[0]).toMatchObject({ number: 1, response_status: null, error: `Timed out after ${ATTEMPT_TIMEOUT_MS / 1000} s` });
    }
    // The platform's view (src/dev/within-limits.ts): six connections at most, and none of ours
    // ever waited for one, so each attempt's timeout ran from its own start.
    const figures = log.mock.calls
      .map(([line]) => String(line))
      .filter((line) => line.includes('"invocation_limits"'))
      .map((line) => JSON.parse(line));
    expect(figures).toHaveLength(rounds.length);
    for (const f of figures) expect(f).toMatchObject({ handler: "queue", waitedConnections: 0 });
    expect(Math.max(...figures.map((f) => f.peakConnections))).toBeGreaterThanOrEqual(ATTEMPTS_AT_ONCE);
    expect(Math.max(...figures.map((f) => f.peakConnections))).toBeLessThanOrEqual(SIMULTANEOUS_CONNECTIONS);
  });

  it("reads only the start of an answer that never ends, records the attempt, and hangs up", async () => {
    const tag = crypto.randomUUID();
    const { client } = await makeTenant({ shard: SHARD });
    const { subscription } = await subscribeToReceiver(client, { url: `${receiverUrl()}/endless/${tag}` });
    const id = await extraDelivery(client.accountId, subscription.id);
    const result = await consume(id);
    expect(result.explicitAcks).toEqual([`msg-${id}`]);
    expect((await deliveryRow(id))!).toMatchObject({ status: "succeeded", attempts: 1 });
    const [attempt] = await attemptRows(id);
    expect(attempt).toMatchObject({ number: 1, response_status: 200, error: null, response_excerpt: "x".repeat(500) });
    // The receiver saw the connection closed after a few socket buffers, not the gigabytes it offered.
    const report = await waitFor(
      () => fetch(`${receiverUrl()}/_endless/${tag}`).then((r) => r.json() as Promise<{ requests: number; bytes_sent: number; open: number }>),
      (r) => r.open === 0,
    );
    expect(report.requests).toBe(1);
    expect(report.bytes_sent).toBeLessThan(32 * 1024 * 1024);
  });

  it("retries a 500 with the first scheduled delay (5 s, jittered)", async () => {
    const { id } = await pendingDelivery([500]);
    const before = Date.now();
    const result = await consume(id);
    expect(result.explicitAcks).toEqual([`msg-${id}`]);
    expect(result.requeued).toHaveLength(1);
    expect(result.requeued[0]!.id).toBe(id);
    expect(result.requeued[0]!.delaySeconds).toBeGreaterThanOrEqual(5);
    expect(result.requeued[0]!.delaySeconds).toBeLessThanOrEqual(6);
    const row = (await deliveryRow(id))!;
    expect(row).toMatchObject({ status: "pending", attempts: 1 });
    expect(row.next_attempt_at - before).toBeGreaterThanOrEqual(4_500);
    expect((await attemptRows(id))[0]).toMatchObject({ response_status: 500, error: "HTTP 500" });
  });

  it("keeps a delivery's first attempt on its row and each later one in webhook_attempts; the log shows them all, in order", async () => {
    const { client, subscription, id } = await pendingDelivery([500, 200]);
    await consume(id);
    expect((await deliveryRow(id))!).toMatchObject({ attempts: 1, first_response_status: 500, first_error: "HTTP 500", first_ended: 1 });
    expect(await db.prepare("select count(*) as n from webhook_attempts where delivery_id = ?").bind(id).first("n")).toBe(0);
    await db.prepare("update webhook_deliveries set next_attempt_at = ? where id = ?").bind(Date.now(), id).run();
    await consume(id);
    expect((await deliveryRow(id))!).toMatchObject({ status: "succeeded", attempts: 2, first_response_status: 500 });
    const later = await db.prepare("select number, response_status, ended from webhook_attempts where delivery_id = ?").bind(id).all();
    expect(later.results).toEqual([{ number: 2, response_status: 200, ended: 1 }]);
    const log = await call("GET", `/v1/webhooks/${subscription.id}/deliveries/${id}/`, { headers: client.headers });
    expect(log.json.attempts.map((a: { number: number; response_status: number; error: string | null }) => [a.number, a.response_status, a.error])).toEqual([
      [1, 500, "HTTP 500"],
      [2, 200, null],
    ]);
  });

  it("retries a network error", async () => {
    const { id, box } = await pendingDelivery([200]);
    // What the runtime's fetch throws when the receiver refuses or drops the connection. (A real
    // refused connection would also make workerd print its own exception and stack to the test log.)
    vi.spyOn(globalThis, "fetch").mockRejectedValue(new TypeError("Network connection lost."));
    const result = await consume(id);
    expect(result.requeued).toHaveLength(1);
    expect(result.requeued[0]!.delaySeconds).toBeGreaterThanOrEqual(5);
    vi.restoreAllMocks();
    expect((await attemptRows(id))[0]).toMatchObject({ response_status: null, error: "Network error: Network connection lost." });
    expect((await deliveryRow(id))!).toMatchObject({ status: "pending", attempts: 1 });
    expect(await receivedAt(box)).toHaveLength(0);
  });

  it("retries a timeout", async () => {
    const { id } = await pendingDelivery();
    vi.spyOn(globalThis, "fetch").mockRejectedValue(new DOMException("The operation timed out.", "TimeoutError"));
    const result = await consume(id);
    expect(result.requeued).toHaveLength(1);
    expect(result.requeued[0]!.delaySeconds).toBeGreaterThanOrEqual(5);
    expect((await attemptRows(id))[0]).toMatchObject({ response_status: null, error: "Timed out after 15 s" });
  });

  // The admission rule counts how attempts end: timeouts against answers. A refused connection is neither.
  it.each([
    ["timeouts", true, new DOMException("The operation timed out.", "TimeoutError")],
    ["refused connections", false, new TypeError("Network connection lost.")],
  ] as const)("after %s, the subscription backs off: %s", async (_name, held, thrown) => {
    const { id, subscription, client } = await pendingDelivery();
    const ids = [id];
    for (let i = 1; i < BACKOFF_MIN_TIMEOUTS; i++) ids.push(await extraDelivery(client.accountId, subscription.id));
    vi.spyOn(globalThis, "fetch").mockRejectedValue(thrown);
    const before = Date.now();
    await consumeAll(ids);
    vi.restoreAllMocks();
    const stats = (await call("GET", `/v1/webhooks/${subscription.id}/stats/`, { headers: client.headers })).json;
    expect(stats.in_flight).toBe(0);
    if (!held) return expect(stats.backoff_until).toBeNull();
    expect(Date.parse(stats.backoff_until) - before).toBeGreaterThanOrEqual(BACKOFF_MS - 1000);
    expect(Date.parse(stats.backoff_until) - Date.now()).toBeLessThanOrEqual(BACKOFF_MS);
  });

  it("puts off a backed-off subscription's deliveries unleased until its back-off ends, oldest first, a probe's worth a round; another's go on", async () => {
    const { subscription, client } = await pendingDelivery();
    const backoffUntil = Date.now() + BACKOFF_MS;
    await db
      .prepare("update webhook_subscriptions set backoff_until = ?, recent_timeouts = ?, recent_answers = 0, recent_since = ? where id = ?")
      .bind(backoffUntil, BACKOFF_MIN_TIMEOUTS, Date.now(), subscription.id)
      .run();
    const ids: string[] = [];
    for (let i = 0; i < PROBE_CAP + 2; i++) ids.push(await extraDelivery(client.accountId, subscription.id));
    await oneAfterAnother(ids);
    const other = await pendingDelivery([200]);
    const { requeued, explicitAcks } = await consumeAll([...ids, other.id]);
    expect(explicitAcks).toHaveLength(ids.length + 1);
    expect((await deliveryRow(other.id))!.status).toBe("succeeded");
    expect(requeued.map((one: { id: string }) => one.id).sort()).toEqual([...ids].sort());
    for (const id of ids) {
      const row = (await deliveryRow(id))!;
      expect(row).toMatchObject({ status: "pending", attempts: 0, leased_until: null, lease_token: null });
      expect(row.next_attempt_at).toBeGreaterThanOrEqual(backoffUntil);
      expect(await attemptRows(id)).toEqual([]);
    }
    // The oldest PROBE_CAP come back in the first round after the back-off, the others a round later.
    const due = await Promise.all(ids.map(async (id) => (await deliveryRow(id))!.next_attempt_at as number));
    expect(due.slice(0, PROBE_CAP).every((at) => at < backoffUntil + BACKOFF_MS + 1)).toBe(true);
    expect(due.slice(PROBE_CAP).every((at) => at >= backoffUntil + BACKOFF_MS)).toBe(true);
  });

  it("admits a hanging subscription PROBE_CAP attempts at once once its back-off has ended, and an answer lifts the limit", async () => {
    const { subscription, client } = await pendingDelivery();
    const hanging = () =>
      db
        .prepare("update webhook_subscriptions set backoff_until = ?, recent_timeouts = ?, recent_answers = 0, recent_since = ? where id = ?")
        .bind(Date.now() - 1, BACKOFF_MIN_TIMEOUTS, Date.now(), subscription.id)
        .run();
    await hanging();
    const ids: string[] = [];
    for (let i = 0; i < PROBE_CAP + 1; i++) ids.push(await extraDelivery(client.accountId, subscription.id));
    await oneAfterAnother(ids);
    vi.spyOn(globalThis, "fetch").mockImplementation(async () => new Response("ok"));
    const { requeued } = await consumeAll(ids);
    // PROBE_CAP admitted, the one past them put off to its round; of those admitted, an invocation
    // starts UNPROVEN_AT_ONCE (it has not been answered) and puts off the others a moment.
    const later = requeued.filter((one: { delaySeconds: number }) => one.delaySeconds > OVERFLOW_DELAY_MS / 1000).map((one: { id: string }) => one.id);
    expect(later).toEqual([ids.at(-1)]);
    expect(requeued).toHaveLength(1 + PROBE_CAP - UNPROVEN_AT_ONCE);
    const statuses = await Promise.all(ids.map(async (id) => (await deliveryRow(id))!.status));
    expect(statuses.filter((status) => status === "succeeded")).toHaveLength(UNPROVEN_AT_ONCE);
    await consumeUntilDone(requeued.map((one: { id: string }) => one.id).filter((id: string) => id !== ids.at(-1)));
    expect((await Promise.all(ids.map(async (id) => (await deliveryRow(id))!.status))).filter((status) => status === "succeeded")).toHaveLength(PROBE_CAP);
    // PROBE_CAP answers now outnumber its timeouts: the next batch is admitted whole.
    const more: string[] = [];
    for (let i = 0; i < PROBE_CAP + 1; i++) more.push(await extraDelivery(client.accountId, subscription.id));
    expect((await consumeAll(more)).requeued).toEqual([]);
  });

  it("honours Retry-After on a 429", async () => {
    const { id } = await pendingDelivery();
    vi.spyOn(globalThis, "fetch").mockResolvedValue(new Response("slow down", { status: 429, headers: { "retry-after": "120" } }));
    const result = await consume(id);
    expect(result.requeued).toEqual([{ id, delaySeconds: 120 }]);
  });

  it("ends the delivery and deactivates the subscription on 410", async () => {
    const { id, subscription } = await pendingDelivery([410]);
    const result = await consume(id);
    expect(result.explicitAcks).toEqual([`msg-${id}`]);
    expect((await deliveryRow(id))!.status).toBe("failed");
    expect((await subscriptionRow(subscription.id))!.is_active).toBe(0);
  });

  it("never sends a succeeded delivery again", async () => {
    const { id, box } = await pendingDelivery([200, 200]);
    await consume(id);
    const again = await consume(id);
    expect(again.explicitAcks).toEqual([`msg-${id}`]);
    expect(await receivedAt(box)).toHaveLength(1);
    expect(await attemptRows(id)).toHaveLength(1);
  });

  it("sends one attempt when two copies of a message arrive together", async () => {
    const { id, box } = await pendingDelivery([200, 200]);
    await Promise.all([consume(id), consume(id)]);
    expect(await receivedAt(box)).toHaveLength(1);
  });

  it("hands a batch back once its deliveries are leased (a receiver that has not answered holds no batch behind it), and logs each attempt as started before its receiver answers", async () => {
    const { id } = await pendingDelivery();
    const held = heldFetch();
    const batch = createMessageBatch<DeliveryMessage>("payments-deliveries", [
      { id: "m1", timestamp: new Date(), attempts: 1, body: { delivery_id: id, shard: SHARD } },
    ]);
    const acked = vi.spyOn(batch.messages[0]!, "ack");
    const ctx = createExecutionContext();
    const running = worker.queue(batch, env, ctx);
    await held.asked(); // the receiver has the request
    await running; // and the invocation has handed its batch back (the attempt goes on in waitUntil)
    expect(acked).toHaveBeenCalledOnce();
    expect((await deliveryRow(id))!.leased_until).toBeGreaterThan(Date.now());
    // The attempt is in the log before the receiver answers.
    expect(await attemptRows(id)).toMatchObject([{ number: 1, ended: 0 }]);
    held.answers[0]!(new Response("ok"));
    await running;
    await waitOnExecutionContext(ctx);
    expect((await deliveryRow(id))!).toMatchObject({ status: "succeeded", attempts: 1, leased_until: null });
    expect(await attemptRows(id)).toMatchObject([{ number: 1, ended: 1, response_status: 200 }]);
  });

  it("sends a redelivery asked for while an attempt is in flight, after that attempt succeeds", async () => {
    const { client, subscription, id } = await pendingDelivery();
    const { answers, asked } = heldFetch();
    const batch = createMessageBatch<DeliveryMessage>("payments-deliveries", [
      { id: "m1", timestamp: new Date(), attempts: 1, body: { delivery_id: id, shard: SHARD } },
    ]);
    const ctx = createExecutionContext();
    const running = worker.queue(batch, env, ctx);
    await asked();
    const path = `/v1/webhooks/${subscription.id}/deliveries/${id}/`;
    const during = await call("GET", path, { headers: client.headers });
    expect(during.json.attempts).toEqual([
      { number: 1, started_at: expect.any(String), duration_ms: null, response_status: null, error: "in progress", response_excerpt: null },
    ]);

    const { queue, sent } = recordingQueue();
    expect((await call("POST", `${path}redeliver/`, { headers: client.headers, bindings: { DELIVERIES: queue } })).status).toBe(202);
    answers[0]!(new Response("ok")); // the first attempt succeeds after the redelivery was asked for
    await running;
    await waitOnExecutionContext(ctx);
    expect((await deliveryRow(id))!).toMatchObject({ status: "pending", attempts: 1 });
    expect(sent.map((message) => message.id)).toEqual([id]);

    vi.mocked(globalThis.fetch).mockImplementation(async () => new Response("ok again"));
    await consume(id);
    expect((await deliveryRow(id))!).toMatchObject({ status: "succeeded", attempts: 2 });
    const after = await call("GET", path, { headers: client.headers });
    expect(after.json.attempts.map((a: { number: number; response_status: number }) => [a.number, a.response_status])).toEqual([
      [1, 200],
      [2, 200],
    ]);
    expect(globalThis.fetch).toHaveBeenCalledTimes(2);
  });

  it("keeps an attempt whose worker died before recording it, as interrupted, and sends the delivery again once its lease lapses", async () => {
    const { client, subscription, box, id } = await pendingDelivery([200, 200]);
    // A worker leases the delivery, POSTs it, and dies before recording the answer.
    const dying = createExecutionContext();
    const posted = new Promise<void>((resolve) => {
      const real = globalThis.fetch;
      vi.spyOn(globalThis, "fetch").mockImplementation(async (...args) => {
        await real(...args); // the receiver gets it
        resolve();
        return new Promise<Response>(() => {}); // and the worker never sees the answer
      });
    });
    // Its invocation never ends: the test goes on without it, as the service goes on without a dead worker.
    void worker.queue(
      createMessageBatch("payments-deliveries", [{ id: "m1", timestamp: new Date(), attempts: 1, body: { delivery_id: id, shard: SHARD } }]),
      env,
      dying,
    );
    await posted;
    vi.restoreAllMocks();
    const lease = await deliveryRow(id);
    expect(lease).toMatchObject({ status: "pending", attempts: 1 });

    // Time passes beyond the lease; the sweeper tells a lapsed lease from a late message.
    const { queue, sent } = recordingQueue();
    expect(await sweepOutbox(createDb(db), { queue, shard: SHARD }, lease!.leased_until - 1)).toBe(0); // still held
    expect(await sweepOutbox(createDb(db), { queue, shard: SHARD }, lease!.leased_until + 1)).toBe(1);
    expect(sent.map((message) => message.id)).toEqual([id]);
    await consume(id);
    expect(await receivedAt(box)).toHaveLength(2);
    const log = await call("GET", `/v1/webhooks/${subscription.id}/deliveries/${id}/`, { headers: client.headers });
    expect(log.json.status).toBe("succeeded");
    expect(log.json.attempts).toMatchObject([
      { number: 1, duration_ms: null, response_status: null, error: expect.stringMatching(/^interrupted/) },
      { number: 2, response_status: 200, error: null },
    ]);
  });

  it("holds the in-flight cap across two consumer invocations with separate memory: the second puts off, unleased, what the first has no room for", async () => {
    const { client, subscription } = await pendingDelivery();
    // A receiver that has been answering: an invocation starts all it admits (lanes.ts).
    await db.prepare("update webhook_subscriptions set recent_answers = 5, recent_since = ? where id = ?").bind(Date.now(), subscription.id).run();
    // Another subscription's delivery, in the second batch, is not held back by this one's cap.
    const other = await pendingDelivery();
    const { answers, asked, spy } = heldFetch();
    const { queue, sent } = recordingQueue();
    const run = (consumer: typeof worker, ids: string[]) => {
      const batch = createMessageBatch<DeliveryMessage>(
        "payments-deliveries",
        ids.map((id) => ({ id, timestamp: new Date(), attempts: 1, body: { delivery_id: id, shard: SHARD } })),
      );
      const ctx = createExecutionContext();
      return (async () => {
        await consumer.queue!(batch, { ...env, DELIVERIES: queue }, ctx);
        await waitOnExecutionContext(ctx);
      })();
    };
    // The first invocation leases as many attempts as a subscription may have at once and starts
    // the first of them, none answered...
    const first = run(worker, await Promise.all(Array.from({ length: IN_FLIGHT_CAP }, () => extraDelivery(client.accountId, subscription.id))));
    await asked(ATTEMPTS_AT_ONCE);
    expect((await call("GET", `/v1/webhooks/${subscription.id}/stats/`, { headers: client.headers })).json.in_flight).toBe(IN_FLIGHT_CAP);
    // Waiting past SLOW_MS, they make the receiver a slow one: IN_FLIGHT_CAP is its cap.
    await new Promise((resolve) => setTimeout(resolve, SLOW_MS + 100));
    // ...and a second, in a fresh copy of every module (nothing shared but D1), attempts none of the next two.
    vi.resetModules();
    const fresh = (await import("../../src/index")).default;
    expect(fresh).not.toBe(worker);
    const later = await Promise.all([1, 2].map(() => extraDelivery(client.accountId, subscription.id)));
    // When the oldest attempt in flight started, as the admission rule reads it (lease.ts).
    const oldest =
      (await db
        .prepare("select min(leased_until) as at from webhook_deliveries where subscription_id = ? and leased_until is not null")
        .bind(subscription.id)
        .first<{ at: number }>())!.at - LEASE_MS;
    const second = run(fresh, [...later, other.id]);
    await asked(ATTEMPTS_AT_ONCE + 1);
    answers.pop()!(new Response("ok"));
    await second;
    expect((await deliveryRow(other.id))!).toMatchObject({ status: "succeeded", attempts: 1 });
    expect(sent.map((item) => item.id)).toEqual(later);
    for (const item of sent) {
      const row = (await deliveryRow(item.id))!;
      // Back once the oldest attempt in flight has surely ended (its timeout).
      expect(row).toMatchObject({ status: "pending", attempts: 0, leased_until: null });
      expect(row.next_attempt_at).toBeGreaterThanOrEqual(oldest + ATTEMPT_TIMEOUT_MS);
      expect(item.delaySeconds).toBeGreaterThanOrEqual(10);
    }
    spy.mockImplementation(async () => new Response("ok"));
    for (const answer of answers) answer(new Response("ok"));
    await first;
    const ended = await db
      .prepare("select status, count(*) as n from webhook_deliveries where subscription_id = ? group by status order by status")
      .bind(subscription.id)
      .all();
    expect(ended.results).toEqual([
      { status: "pending", n: 3 },
      { status: "succeeded", n: IN_FLIGHT_CAP },
    ]);
    // Room again: the put-off deliveries go out when due.
    await db
      .prepare("update webhook_deliveries set next_attempt_at = ? where id in (?, ?)")
      .bind(Date.now(), ...later)
      .run();
    spy.mockImplementation(async () => new Response("ok"));
    expect((await consumeAll(later)).requeued).toEqual([]);
    expect((await Promise.all(later.map(deliveryRow))).map((row) => row!.status)).toEqual(["succeeded", "succeeded"]);
  });

  it("records a whole batch's attempts, and an attempt whose subscription was deleted meanwhile is dropped with it", async () => {
    const { client, subscription, box } = await pendingDelivery(Array(8).fill(200));
    const ids = await Promise.all(Array.from({ length: 6 }, () => extraDelivery(client.accountId, subscription.id)));
    const other = await pendingDelivery([200]);
    const [result] = await consumeUntilDone([...ids, other.id]);
    expect(result!.explicitAcks).toHaveLength(7);
    for (const id of [...ids, other.id]) expect((await deliveryRow(id))!).toMatchObject({ status: "succeeded", attempts: 1 });
    expect(await receivedAt(box)).toHaveLength(6);

    const late = await pendingDelivery([200]);
    const { answers, asked } = heldFetch();
    const batch = createMessageBatch<DeliveryMessage>("payments-deliveries", [
      { id: "m", timestamp: new Date(), attempts: 1, body: { delivery_id: late.id, shard: SHARD } },
    ]);
    const ctx = createExecutionContext();
    const errors = vi.spyOn(console, "error");
    const running = worker.queue(batch, env, ctx);
    await asked();
    expect((await call("DELETE", `/v1/webhooks/${late.subscription.id}/`, { headers: late.client.headers })).status).toBe(204);
    answers[0]!(new Response("ok"));
    await running;
    await waitOnExecutionContext(ctx);
    expect(await deliveryRow(late.id)).toBeNull();
    expect(errors).not.toHaveBeenCalled();
  });

  it("chains a wait longer than the queue's maximum delay without sending", async () => {
    const { id, box } = await pendingDelivery([200], {}, { next_attempt_at: Date.now() + 30 * 3600 * 1000 });
    const result = await consume(id);
    expect(result.retryMessages).toEqual([{ msgId: `msg-${id}`, delaySeconds: 12 * 3600 }]);
    expect(await receivedAt(box)).toHaveLength(0);
  });

  it("re-checks the URL policy before each delivery", async () => {
    const { id, box } = await pendingDelivery([200]);
    const result = await consume(id, "payments-deliveries", { ALLOW_LOCAL_WEBHOOK_URLS: "false" });
    expect(result.requeued).toHaveLength(1);
    expect((await attemptRows(id))[0]!.error).toMatch(/^URL refused/);
    expect(await receivedAt(box)).toHaveLength(0);
  });

  it("records a failed attempt, retried on schedule, when the subscription's secrets were sealed with another key", async () => {
    const { id, box } = await pendingDelivery([200]);
    vi.spyOn(console, "error").mockImplementation(() => {});
    const result = await consume(id, "payments-deliveries", { ENCRYPTION_KEY: btoa(String.fromCharCode(...new Uint8Array(32).fill(9))) });
    expect(result.requeued).toHaveLength(1);
    expect(result.requeued[0]!.delaySeconds).toBeLessThanOrEqual(6);
    expect((await attemptRows(id))[0]!.error).toContain("sealed with another ENCRYPTION_KEY");
    expect(await receivedAt(box)).toHaveLength(0);
    // The right key back: the next attempt goes through.
    await db.prepare("update webhook_deliveries set next_attempt_at = ? where id = ?").bind(Date.now(), id).run();
    expect((await consume(id)).explicitAcks).toEqual([`msg-${id}`]);
    expect(await receivedAt(box)).toHaveLength(1);
  });

  it.each([
    ["missing", ""],
    ["malformed", "not-a-key"],
  ])(
    "puts a delivery off unleased and untried while ENCRYPTION_KEY is %s: no attempt logged or counted, back in a minute, sent once the key is deployed",
    async (_, key) => {
      const { id, box } = await pendingDelivery([200]);
      const errors = vi.spyOn(console, "error").mockImplementation(() => {});
      const before = Date.now();
      const result = await consume(id, "payments-deliveries", { ENCRYPTION_KEY: key });
      expect(result.explicitAcks).toEqual([`msg-${id}`]);
      expect(result.requeued).toEqual([{ id, delaySeconds: NOT_CONFIGURED_RETRY_SECONDS }]);
      expect(await attemptRows(id)).toEqual([]);
      const row = (await deliveryRow(id))!;
      expect(row).toMatchObject({ status: "pending", attempts: 0, leased_until: null, lease_token: null, schedule_started_at: null });
      expect(row.next_attempt_at).toBeGreaterThanOrEqual(before + NOT_CONFIGURED_RETRY_SECONDS * 1000);
      expect(await receivedAt(box)).toHaveLength(0);
      expect(errors.mock.calls.map(([line]) => JSON.parse(String(line)).type)).toEqual(expect.arrayContaining(["config_error", "delivery_put_off"]));
      // The sweeper leaves it alone meanwhile: its message is on its way.
      expect(await sweepOutbox(createDb(db), { queue: recordingQueue().queue, shard: SHARD })).toBe(0);
      // The key deployed: the delivery goes through as its first attempt.
      await db.prepare("update webhook_deliveries set next_attempt_at = ? where id = ?").bind(Date.now(), id).run();
      expect((await consume(id)).explicitAcks).toEqual([`msg-${id}`]);
      expect(await receivedAt(box)).toHaveLength(1);
      expect((await attemptRows(id)).map((attempt) => [attempt.number, attempt.response_status])).toEqual([[1, 200]]);
    },
  );

  it("gives up on a delivery past 3 days of retries and keeps it as failed", async () => {
    const { id } = await pendingDelivery([500], {}, { attempts: 10 });
    await db
      .prepare("update webhook_deliveries set schedule_started_at = ? where id = ?")
      .bind(Date.now() - 71 * 3600 * 1000, id)
      .run();
    const result = await consume(id);
    expect(result.explicitAcks).toEqual([`msg-${id}`]);
    expect(await deliveryRow(id)).toMatchObject({ status: "failed", attempts: 11, next_attempt_at: null });
  });

  it("deactivates a subscription whose deliveries have all failed for 5 days", async () => {
    const { id, subscription } = await pendingDelivery([500]);
    await db
      .prepare("update webhook_subscriptions set failing_since = ? where id = ?")
      .bind(Date.now() - 5 * 24 * 3600 * 1000 - 1000, subscription.id)
      .run();
    await consume(id);
    expect((await subscriptionRow(subscription.id))!.is_active).toBe(0);
  });

  it("marks a dead-lettered delivery failed", async () => {
    const { id } = await pendingDelivery([500]);
    const result = await consume(id, "payments-deliveries-dlq");
    expect(result.explicitAcks).toEqual([`msg-${id}`]);
    expect((await deliveryRow(id))!.status).toBe("failed");
  });
});

describe("secrets", () => {
  it("never reach the delivery log when a receiver echoes them encoded: URL-encoded, JSON-escaped, base64, or the key in hex or base64url", async () => {
    // A password whose encodings all differ from it.
    const { client, subscription, id } = await pendingDelivery(undefined, { password: 'p@ss wörd/"€+' });
    const key = Uint8Array.from(atob(subscription.secret.slice(6)), (c) => c.charCodeAt(0));
    const hex = [...key].map((b) => b.toString(16).padStart(2, "0")).join("");
    const pair = `${subscription.username}:${subscription.password}`;
    const utf8Base64 = (text: string) => btoa(String.fromCharCode(...new TextEncoder().encode(text)));
    const echoes = [
      encodeURIComponent(subscription.password),
      JSON.stringify(subscription.password).slice(1, -1),
      utf8Base64(subscription.password),
      utf8Base64(pair),
      hex,
      hex.toUpperCase(),
      btoa(String.fromCharCode(...key))
        .replace(/\+/g, "-")
        .replace(/\//g, "_")
        .replace(/=+$/, ""),
      encodeURIComponent(subscription.secret),
    ];
    vi.spyOn(globalThis, "fetch").mockImplementation(async () => new Response(echoes.map((echo, i) => `${i}=${echo}`).join(" "), { status: 200 }));
    await consume(id);
    const log = (await call("GET", `/v1/webhooks/${subscription.id}/deliveries/${id}/`, { headers: client.headers })).json;
    const stored = JSON.stringify((await attemptRows(id)).map((row) => row.response_excerpt));
    for (const echo of echoes) {
      expect(JSON.stringify(log)).not.toContain(echo);
      expect(stored).not.toContain(echo);
    }
    expect(log.attempts[0].response_excerpt).toBe(echoes.map((_, i) => `${i}=[redacted]`).join(" "));
  });

  it("never reach the logs, the delivery log or the stored rows in plain text, even when a receiver echoes them back", async () => {
    const logged: string[] = [];
    for (const method of ["log", "error", "warn", "info", "debug"] as const) {
      vi.spyOn(console, method).mockImplementation((...args: unknown[]) => void logged.push(args.map(String).join(" ")));
    }
    const { client, subscription, id } = await pendingDelivery();
    // A receiver that echoes every header it got, then one that fails with them in its error page.
    const echo = async (_url: RequestInfo | URL, init?: RequestInit) => new Response(JSON.stringify(init?.headers), { status: 200 });
    vi.spyOn(globalThis, "fetch").mockImplementation(echo);
    await consume(id);
    const rotated = await call("POST", `/v1/webhooks/${subscription.id}/rotate-secret/`, { headers: client.headers });
    expect(rotated.status).toBe(200);
    const second = await extraDelivery(client.accountId, subscription.id);
    vi.mocked(globalThis.fetch).mockImplementation(async (url, init) => new Response(`bad request: ${JSON.stringify(init?.headers)}`, { status: 400 }));
    await consume(second);

    const secrets = [
      HOOK_USER.password,
      subscription.secret,
      subscription.secret.slice(6),
      rotated.json.secret,
      rotated.json.secret.slice(6),
      client.password,
      btoa(`${HOOK_USER.username}:${HOOK_USER.password}`),
    ];
    const excerpts = { results: (await storedAttempts([id, second])).map(({ response_excerpt, error }) => ({ response_excerpt, error })) };
    expect(excerpts.results).toHaveLength(2);
    expect(excerpts.results.map((row) => row.response_excerpt).join("")).toContain("[redacted]");
    const stored = JSON.stringify([
      excerpts.results,
      await db.prepare("select * from webhook_subscriptions where id = ?").bind(subscription.id).first(),
      await env.DB.prepare("select * from api_users where username = ?").bind(client.username).first(),
    ]);
    const deliveryLog = JSON.stringify((await call("GET", `/v1/webhooks/${subscription.id}/deliveries/`, { headers: client.headers })).json);
    for (const secret of secrets) {
      expect(logged.join("\n")).not.toContain(secret);
      expect(stored).not.toContain(secret);
      expect(deliveryLog).not.toContain(secret);
    }
    expect(logged.some((line) => line.includes("delivery_attempt"))).toBe(true);
  });
});

describe("the delivery log", () => {
  it("lists newest first, filters, and pages past 100 deliveries", async () => {
    const { client, subscription } = await pendingDelivery();
    const base = Date.UTC(2026, 5, 1);
    const statements = Array.from({ length: 150 }, (_, i) =>
      db
        .prepare(
          `insert into webhook_deliveries (id, subscription_id, account_id, payment_id, body, status, attempts, next_attempt_at, schedule_started_at, enqueued_at, leased_until, created_at, updated_at)
         values (?, ?, ?, 'pmt_x', '{}', ?, 0, null, null, null, null, ?, ?)`,
        )
        .bind(crypto.randomUUID(), subscription.id, client.accountId, i % 3 === 0 ? "failed" : "succeeded", base + i * 1000, base + i * 1000),
    );
    await db.batch(statements);
    const path = `/v1/webhooks/${subscription.id}/deliveries/`;
    const all = await call("GET", `${path}?page_size=1000`, { headers: client.headers });
    expect(all.status).toBe(200);
    expect(all.json.count).toBe(151);
    const created = all.json.results.map((d: { created: string }) => Date.parse(d.created));
    expect(created).toEqual([...created].sort((a, b) => b - a));
    const failed = await call("GET", `${path}?status=failed&page_size=1000`, { headers: client.headers });
    expect(failed.json.count).toBe(50);
    const early = await call("GET", `${path}?created__lt=${new Date(base + 10_000).toISOString()}`, { headers: client.headers });
    expect(early.json.count).toBe(10);
    const size = pageBounds("deliveries").max;
    const first = await call("GET", `${path}?page_size=${size}`, { headers: client.headers });
    expect(first.json.results).toHaveLength(size);
    const second = await call("GET", first.json.next.slice(BASE.length), { headers: client.headers });
    expect(second.json.results[0].created < first.json.results[size - 1].created).toBe(true);
    expect((await call("GET", `${path}?status=sent`, { headers: client.headers })).json).toEqual({
      status: ["Select a valid choice. sent is not one of the available choices."],
    });
  });
});

describe("the outbox", () => {
  it("re-sends a message that is late behind a slow queue once per lost interval, not at every sweep", async () => {
    const minute = 60_000;
    const { id } = await pendingDelivery(undefined, {}, { next_attempt_at: Date.now() - 10 * minute, enqueued_at: Date.now() - 10 * minute });
    const { queue, sent } = recordingQueue();
    const sweep = (at: number) => sweepOutbox(createDb(db), { queue, shard: SHARD }, at);
    const now = Date.now();
    await sweep(now); // handed over 10 minutes ago and never leased: lost
    for (const later of [1, 2]) await sweep(now + later * minute); // the re-sent message is only late
    await sweep(now + LOST_AFTER_MS + 1); // and lost again only after the interval
    expect(sent.filter((message) => message.id === id)).toHaveLength(2);
  });

  it("hands a backlog over in rounds that go on from where the last stopped, each delivery once, up to the sweep's most", async () => {
    const now = Date.now();
    const lostSince = now - 30 * 24 * 3600_000; // older than anything else in this file: ours come first
    const offsets = [0, 1, 1, 2, 3, 4, 5]; // two share a due time across a round's end
    const ids: string[] = [];
    for (const offset of offsets) ids.push((await pendingDelivery(undefined, {}, { next_attempt_at: lostSince + offset, enqueued_at: null })).id);
    const { queue, sent } = recordingQueue();
    const ours = () => sent.map((message) => message.id).filter((id) => ids.includes(id));
    expect(await sweepOutbox(createDb(db), { queue, shard: SHARD }, now, { round: 2, max: 5 })).toBe(5);
    expect(ours().sort()).toEqual(ids.slice(0, 5).sort()); // the five due first
    await sweepOutbox(createDb(db), { queue, shard: SHARD }, now, { round: 2, max: 5 });
    expect(ours().sort()).toEqual([...ids].sort()); // the rest at the next sweep, none twice
  });

  it("loses nothing when the queue send fails after the commit: the sweeper sends it, once", async () => {
    const { client, processor } = await makeTenant({ shard: SHARD });
    const { subscription, box } = await subscribeToReceiver(client, { payment_status: true });
    const { payment } = await makePayment(client);
    await waitFor(
      () => receivedAt(box),
      (got) => got.length === 1,
    );
    // Its outcome recorded too (the receiver may get it before the consumer writes that down).
    await allEnded(client, [subscription.id]);

    const brokenQueue = { send: () => Promise.reject(new Error("queue down")), sendBatch: () => Promise.reject(new Error("queue down")) };
    const response = await call("POST", `/v2/payments/${payment.id}/events/`, {
      body: { event_code: "PU10", description: "Sent", status: "in-progress" },
      headers: processor.headers,
      bindings: { DELIVERIES: brokenQueue as unknown as Queue<DeliveryMessage> },
    });
    expect(response.status).toBe(201); // the change is made though its message could not go
    const pending = await db
      .prepare("select id, enqueued_at from webhook_deliveries where payment_id = ? and status = 'pending'")
      .bind(payment.id)
      .all<{ id: string; enqueued_at: number | null }>();
    expect(pending.results).toHaveLength(1);
    expect(pending.results[0]!.enqueued_at).toBeNull(); // no message went: only the sweeper can send it
    expect(await receivedAt(box)).toHaveLength(1);

    const sweep = createExecutionContext();
    await worker.scheduled(createScheduledController({ cron: "* * * * *" }), env, sweep);
    await waitOnExecutionContext(sweep);
    const got = await waitFor(
      () => receivedAt(box),
      (all) => all.length === 2,
    );
    expect(JSON.parse(got[1]!.body).payment_status).toBe("in-progress");
    const subscriptionId = (await call("GET", "/v1/webhooks/", { headers: client.headers })).json.results[0].id;
    await allEnded(client, [subscriptionId]);
    expect(await receivedAt(box)).toHaveLength(2);
    const log = await call("GET", `/v1/webhooks/${subscriptionId}/deliveries/?status=succeeded`, { headers: client.headers });
    expect(log.json.count).toBe(2);
  });
});

describe("the sweeper after a restart", () => {
  it("re-sends every due pending delivery at once, held or handed over, and none that ended or is not due", async () => {
    const now = Date.now();
    const handedOver = (await pendingDelivery(undefined, {}, { enqueued_at: now - 1000 })).id;
    const leased = (await pendingDelivery()).id;
    // Leased a second before the restart, by a worker that died with the service.
    await db
      .prepare("update webhook_deliveries set leased_until = ?, lease_token = 'dead worker' where id = ?")
      .bind(now - 1_000 + LEASE_MS, leased)
      .run();
    const later = (await pendingDelivery(undefined, {}, { next_attempt_at: now + 60_000 })).id;
    const done = (await pendingDelivery(undefined, {}, { status: "succeeded", next_attempt_at: null })).id;
    const at = Date.now() + 1; // the restart, after every row was written
    const { queue, sent } = recordingQueue();
    const ids = new Set([handedOver, leased, later, done]);
    const ours = () => sent.filter((message) => ids.has(message.id)).map((message) => message.id);
    await sweepOutbox(createDb(db), { queue, shard: SHARD }, at); // an ordinary sweep: late, not lost
    expect(ours()).toEqual([]);
    await sweepOutbox(createDb(db), { queue, shard: SHARD }, at, { restartedAt: at });
    expect(ours().sort()).toEqual([handedOver, leased].sort());
    await sweepOutbox(createDb(db), { queue, shard: SHARD }, at, { restartedAt: at }); // once
    expect(ours()).toHaveLength(2);
  });

  it("leaves alone what the restarted service handed over or leased itself before the sweep ran", async () => {
    const restartedAt = Date.now() - 5_000;
    const handedOverSince = (await pendingDelivery(undefined, {}, { enqueued_at: restartedAt + 1_000 })).id;
    const leasedSince = (await pendingDelivery(undefined, {}, { enqueued_at: restartedAt + 1_000 })).id;
    await db
      .prepare("update webhook_deliveries set leased_until = ?, lease_token = 'live worker' where id = ?")
      .bind(restartedAt + 2_000 + LEASE_MS, leasedSince)
      .run();
    const leasedBefore = (await pendingDelivery(undefined, {}, { enqueued_at: restartedAt - 20_000 })).id;
    await db
      .prepare("update webhook_deliveries set leased_until = ?, lease_token = 'dead worker' where id = ?")
      .bind(restartedAt - 1_000 + LEASE_MS, leasedBefore)
      .run();
    const { queue, sent } = recordingQueue();
    const ids = new Set([handedOverSince, leasedSince, leasedBefore]);
    await sweepOutbox(createDb(db), { queue, shard: SHARD }, Date.now(), { restartedAt });
    expect(sent.filter((message) => ids.has(message.id)).map((message) => message.id)).toEqual([leasedBefore]);
    // The live lease still holds: its attempt's outcome will be recorded on the row.
    expect(await deliveryRow(leasedSince)).toMatchObject({ lease_token: "live worker", leased_until: restartedAt + 2_000 + LEASE_MS });
  });

  it('fired as the "@restart" cron, takes as the restart the service\'s first request: what it leased since is its own', async () => {
    await worker.fetch(new Request(`${BASE}/healthz`), env, createExecutionContext()); // the service is up
    await new Promise((resolve) => setTimeout(resolve, 5));
    const now = Date.now();
    const live = (await pendingDelivery()).id;
    await db
      .prepare("update webhook_deliveries set leased_until = ?, lease_token = 'live worker' where id = ?")
      .bind(now + LEASE_MS, live)
      .run();
    const stale = (await pendingDelivery(undefined, {}, { enqueued_at: now - 60 * 60_000, next_attempt_at: now - 60 * 60_000 })).id;
    const { queue, sent } = recordingQueue();
    const ctx = createExecutionContext();
    await worker.scheduled(createScheduledController({ cron: "@restart" }), { ...env, DELIVERIES: queue }, ctx);
    await waitOnExecutionContext(ctx);
    expect(sent.map((message) => message.id)).toContain(stale);
    expect(sent.map((message) => message.id)).not.toContain(live);
    expect(await deliveryRow(live)).toMatchObject({ lease_token: "live worker" });
  });
});
