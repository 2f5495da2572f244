import { createExecutionContext, createMessageBatch, env, getQueueResult, waitOnExecutionContext } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { runCron } from "../src/cron";
import { SIMULTANEOUS_CONNECTIONS } from "../src/lib/platform-limits";
import { inFlightD1, newInFlight } from "./helpers/in-flight-d1";
import worker from "../src/index";
import type { DeliveryMessage } from "../src/webhooks";
import { ADMIN, call, makePayment, makeTenant, type User } from "./helpers/api";
import { tenantRows } from "./helpers/tenant-rows";
import { receivedAt, subscribeToReceiver, waitFor } from "./helpers/webhooks";

afterEach(() => {
  vi.restoreAllMocks();
});

const shards = async () =>
  (await call("GET", "/admin/shards/", { headers: ADMIN })).json as { name: string; accounts: number; bytes: number | null; open: boolean }[];
const createAccount = (body: Record<string, unknown>) => call("POST", "/admin/accounts/", { body: { name: "Placed", ...body }, headers: ADMIN });
const setOpen = (name: string, open: unknown) => call("PATCH", `/admin/shards/${name}/`, { body: { open }, headers: ADMIN });

async function rowsIn(d1: D1Database, accountId: string): Promise<number> {
  return Object.values(await tenantRows(d1, accountId)).reduce((sum, n) => sum + n, 0);
}

/** A pending delivery row on the account's shard, due now and never handed over (as the outbox leaves one whose send failed). */
async function pendingDelivery(d1: D1Database, user: User, subscriptionId: string): Promise<string> {
  const id = crypto.randomUUID();
  const now = Date.now();
  await d1
    .prepare(
      `insert into webhook_deliveries (id, subscription_id, account_id, payment_id, body, status, attempts, next_attempt_at, enqueued_at, created_at, updated_at)
       values (?, ?, ?, 'pmt_test', '{"object_type":"payment","object_id":"pmt_test","event":"payment.changed"}', 'pending', 0, ?, null, ?, ?)`,
    )
    .bind(id, subscriptionId, user.accountId, now - 1000, now, now)
    .run();
  return id;
}

async function consume(messages: DeliveryMessage[] | unknown[], bindings: Partial<typeof env> = {}) {
  const batch = createMessageBatch<DeliveryMessage>(
    "payments-deliveries",
    messages.map((body, i) => ({ id: `m${i}`, timestamp: new Date(), attempts: 1, body: body as DeliveryMessage })),
  );
  const retries = batch.messages.map((message) => vi.spyOn(message, "retry"));
  const ctx = createExecutionContext();
  await worker.queue(batch, { ...env, ...bindings }, ctx);
  await waitOnExecutionContext(ctx);
  const result = await getQueueResult(batch, ctx);
  return { ...result, retryDelays: retries.map((spy) => spy.mock.calls.map(([options]) => options?.delaySeconds)) };
}

describe("the shard map (admin API)", () => {
  it("lists every configured shard with its accounts, its size as D1 reports it, and whether it is open", async () => {
    const before = await shards();
    expect(before.map((shard) => shard.name)).toEqual(["A", "B"]);
    for (const shard of before) expect(shard).toEqual({ name: shard.name, accounts: expect.any(Number), bytes: expect.any(Number), open: expect.any(Boolean) });
    expect(before.every((shard) => shard.bytes! > 0)).toBe(true);
    const made = await createAccount({ shard: "B" });
    expect(made).toMatchObject({ status: 201, json: { shard: "B" } });
    const after = await shards();
    expect(after.find((shard) => shard.name === "B")!.accounts).toBe(before.find((shard) => shard.name === "B")!.accounts + 1);
    expect(after.find((shard) => shard.name === "A")!.accounts).toBe(before.find((shard) => shard.name === "A")!.accounts);
  });

  it("places an account on the shard named, and refuses an unknown or closed one with 400; a closed shard takes no new account, its accounts keep working", async () => {
    expect((await createAccount({ shard: "A" })).json.shard).toBe("A");
    expect(await createAccount({ shard: "Z" })).toMatchObject({ status: 400, json: { shard: ['No shard "Z" is configured.'] } });
    expect(await createAccount({ shard: "" })).toMatchObject({ status: 400, json: { shard: [expect.any(String)] } });
    const onA = await makeTenant({ shard: "A" });
    try {
      expect(await setOpen("A", false)).toMatchObject({ status: 200, json: { name: "A", open: false } });
      expect(await createAccount({ shard: "A" })).toMatchObject({ status: 400, json: { shard: ['Shard "A" is closed to new accounts.'] } });
      for (let i = 0; i < 3; i++) expect((await createAccount({})).json.shard).toBe("B");
      expect((await makePayment(onA.client)).payment.id).toMatch(/^pmt_/);
    } finally {
      expect((await setOpen("A", true)).json.open).toBe(true);
    }
  });

  it("answers 404 for a shard it does not know and 400 for a body without a boolean `open`", async () => {
    expect(await setOpen("Z", false)).toMatchObject({ status: 404, json: { detail: "Not found." } });
    expect(await setOpen("A", "no")).toMatchObject({ status: 400, json: { open: ["Must be a valid boolean."] } });
    expect((await call("PATCH", "/admin/shards/A/", { body: {}, headers: ADMIN })).json).toEqual({ open: ["This field is required."] });
  });
});

describe("routing to the account's shard", () => {
  it("keeps every row of an account on its shard and none on the other, whichever shard it is on", async () => {
    for (const [home, other] of [
      ["A", "B"],
      ["B", "A"],
    ] as const) {
      const { client, processor } = await makeTenant({ shard: home });
      const { box } = await subscribeToReceiver(client, { payment_status: true });
      const { payment } = await makePayment(client);
      await call("POST", `/v2/payments/${payment.id}/events/`, {
        body: { event_code: "PU10", description: "Sent", status: "in-progress" },
        headers: { ...processor.headers, "Idempotency-Key": "k" },
      });
      await waitFor(
        () => receivedAt(box),
        (got) => got.length === 2,
      );
      expect(await rowsIn(env[`SHARD_${home}`]!, client.accountId)).toBeGreaterThan(10);
      expect(await rowsIn(env[`SHARD_${other}`]!, client.accountId)).toBe(0);
    }
  });

  it("answers 500 `Service is not configured.` with one log line for the accounts of a shard missing from the configuration, and serves the others", async () => {
    const onA = await makeTenant({ shard: "A" });
    const onB = await makeTenant({ shard: "B" });
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    const withoutB = { SHARD_B: undefined };
    const refused = await call("GET", "/v2/payments/", { headers: onB.client.headers, bindings: withoutB });
    expect(refused).toMatchObject({ status: 500, json: { detail: "Service is not configured." } });
    const lines = errors.mock.calls.map((args) => String(args[0])).filter((line) => line.includes('"shard_not_configured"'));
    expect(lines.map((line) => JSON.parse(line))).toEqual([{ type: "shard_not_configured", shard: "B", binding: "SHARD_B" }]);
    expect((await call("GET", "/v2/payments/", { headers: onA.client.headers, bindings: withoutB })).status).toBe(200);
    expect(await call("POST", "/admin/accounts/", { body: { name: "x", shard: "B" }, headers: ADMIN, bindings: withoutB })).toMatchObject({ status: 400 });
    const listed = (await call("GET", "/admin/shards/", { headers: ADMIN, bindings: withoutB })).json;
    expect(listed.find((shard: { name: string }) => shard.name === "B")).toMatchObject({ bytes: null });
  });
});

describe("the delivery queue across shards", () => {
  it("delivers a batch whose messages name two shards, each delivery from its own shard", async () => {
    const targets = [];
    for (const shard of ["A", "B"]) {
      const { client } = await makeTenant({ shard });
      const { subscription, box } = await subscribeToReceiver(client);
      targets.push({ shard, box, id: await pendingDelivery(env[`SHARD_${shard}`]!, client, subscription.id) });
    }
    const result = await consume(targets.map(({ id, shard }) => ({ delivery_id: id, shard })));
    expect(result.explicitAcks.sort()).toEqual(["m0", "m1"]);
    for (const { box, id, shard } of targets) {
      await waitFor(
        () => receivedAt(box),
        (got) => got.length === 1,
      );
      const row = await env[`SHARD_${shard}`]!.prepare("select status from webhook_deliveries where id = ?").bind(id).first<{ status: string }>();
      expect(row!.status).toBe("succeeded");
    }
  });

  it("retries later a message whose shard is not configured (nothing is lost meanwhile), and acks one that names no shard", async () => {
    const { client } = await makeTenant({ shard: "B" });
    const { subscription, box } = await subscribeToReceiver(client);
    const id = await pendingDelivery(env.SHARD_B!, client, subscription.id);
    vi.spyOn(console, "error").mockImplementation(() => {});
    const result = await consume([{ delivery_id: id, shard: "B" }, { delivery_id: id }], { SHARD_B: undefined });
    expect(result.explicitAcks).toEqual(["m1"]);
    expect(result.retryMessages.map((m: { msgId: string }) => m.msgId)).toEqual(["m0"]);
    expect(result.retryDelays[0]![0]).toBeGreaterThan(0);
    expect((await env.SHARD_B!.prepare("select status from webhook_deliveries where id = ?").bind(id).first<{ status: string }>())!.status).toBe("pending");
    expect(await receivedAt(box)).toEqual([]);
  });

  it("marks a dead-lettered delivery failed on the shard its message names", async () => {
    const { client } = await makeTenant({ shard: "B" });
    const { subscription } = await subscribeToReceiver(client, {}, Array(20).fill(500));
    const id = await pendingDelivery(env.SHARD_B!, client, subscription.id);
    vi.spyOn(console, "error").mockImplementation(() => {});
    const batch = createMessageBatch<DeliveryMessage>("payments-deliveries-dlq", [
      { id: "d", timestamp: new Date(), attempts: 1, body: { delivery_id: id, shard: "B" } },
    ]);
    const ctx = createExecutionContext();
    await worker.queue(batch, env, ctx);
    await waitOnExecutionContext(ctx);
    expect((await getQueueResult(batch, ctx)).explicitAcks).toEqual(["d"]);
    expect((await env.SHARD_B!.prepare("select status from webhook_deliveries where id = ?").bind(id).first<{ status: string }>())!.status).toBe("failed");
  });
});

describe("the cron across shards", () => {
  it("does every shard's work though another shard fails, and names the failing shard in one log line per job", async () => {
    const { client } = await makeTenant({ shard: "B" });
    const { subscription } = await subscribeToReceiver(client);
    const id = await pendingDelivery(env.SHARD_B!, client, subscription.id);
    const broken = new Proxy(env.SHARD_A!, {
      get(target, name) {
        if (name === "prepare" || name === "batch")
          return () => {
            throw new Error("D1 shard A is down");
          };
        const value = Reflect.get(target, name);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const sent: DeliveryMessage[] = [];
    const queue = {
      send: async (body: DeliveryMessage) => void sent.push(body),
      sendBatch: async (messages: { body: DeliveryMessage }[]) => void sent.push(...messages.map((m) => m.body)),
    };
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    await runCron({ ...env, SHARD_A: broken, DELIVERIES: queue as unknown as Queue<DeliveryMessage> }, Date.now());
    expect(sent).toContainEqual({ delivery_id: id, shard: "B" });
    const failures = errors.mock.calls
      .map((args) => String(args[0]))
      .filter((line) => line.includes('"cron_error"'))
      .map((line) => JSON.parse(line));
    expect(failures.map((line) => [line.job, line.shard]).sort()).toEqual([
      ["challenges", "A"],
      ["counts", "A"],
      ["idempotency", "A"],
      ["lag", "A"],
      ["releases", "A"],
      ["replays", "A"],
      ["retention", "A"],
      ["sweep", "A"],
    ]);
  });
});

describe("the cron's connections", () => {
  it("keeps its D1 calls under way at once within a Worker's simultaneous connections, and does every job", async () => {
    const { client } = await makeTenant({ shard: "B" });
    const { subscription } = await subscribeToReceiver(client);
    const id = await pendingDelivery(env.SHARD_B!, client, subscription.id);
    const counter = newInFlight();
    const sent: DeliveryMessage[] = [];
    const queue = {
      send: async (body: DeliveryMessage) => void sent.push(body),
      sendBatch: async (messages: { body: DeliveryMessage }[]) => void sent.push(...messages.map((m) => m.body)),
    };
    const errors = vi.spyOn(console, "error");
    await runCron(
      {
        ...env,
        DB: inFlightD1(env.DB, counter),
        SHARD_A: inFlightD1(env.SHARD_A!, counter),
        SHARD_B: inFlightD1(env.SHARD_B!, counter),
        DELIVERIES: queue as unknown as Queue<DeliveryMessage>,
      },
      Date.now(),
    );
    expect(errors.mock.calls.filter(([line]) => String(line).includes('"cron_error"'))).toEqual([]);
    expect(sent).toContainEqual({ delivery_id: id, shard: "B" });
    // Thirteen jobs (three on the directory, five a shard), at most JOBS_AT_ONCE of them at once.
    expect(counter.calls).toBeGreaterThan(13);
    expect(counter.most).toBeGreaterThan(1);
    expect(counter.most).toBeLessThanOrEqual(SIMULTANEOUS_CONNECTIONS);
  });
});

describe("re-sealing across shards", () => {
  it("walks the shards one after the other through next_after, and refuses a position no call gave", async () => {
    const positions: (string | null)[] = [];
    let after: string | null = null;
    do {
      const res = await call("POST", `/admin/encryption/reseal/${after === null ? "" : `?after=${encodeURIComponent(after)}`}`, { headers: ADMIN });
      expect(res.status).toBe(200);
      after = res.json.next_after;
      positions.push(after);
    } while (after !== null && positions.length < 100);
    expect(positions.at(-1)).toBeNull();
    expect(positions).toContain("B/");
    for (const bad of ["Z/", "A", "nowhere"]) {
      expect(await call("POST", `/admin/encryption/reseal/?after=${bad}`, { headers: ADMIN })).toMatchObject({
        status: 400,
        json: { after: ["Not a position an earlier call returned."] },
      });
    }
  });
});
