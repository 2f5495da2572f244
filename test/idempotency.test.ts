import { env } from "cloudflare:test";
import type { SQL } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { createDb } from "../src/db/client";
import { answerStatement, claimStatements, forgetExpiredKeys, keyedWrite, KEY_TTL_MS, type RequestKey } from "../src/idempotency";
import { sha256Hex } from "../src/lib/crypto";
import { createPayment } from "../src/services/payments";
import { call, d1Timing, makeCounterparty, makeInvoice, makePayment, makeTenant, makeUser, unique, type User, shardD1, shardOf } from "./helpers/api";
import { receivedAt, subscribeToReceiver, waitFor } from "./helpers/webhooks";

const keyed = (user: User, key: string) => ({ ...user.headers, "Idempotency-Key": key });

async function paymentBody(client: User) {
  const buyer = await makeCounterparty(client, "buyer");
  const supplier = await makeCounterparty(client, "supplier");
  const invoice = await makeInvoice(client, buyer.id, supplier.id);
  return { originating_counterparty_id: buyer.id, receiving_counterparty_id: supplier.id, invoice_ids: [invoice.id], payment_method: "ach" };
}

const paymentsOf = async (accountId: string) =>
  (await (await shardD1(accountId)).prepare("select id from payments where account_id = ?").bind(accountId).all<{ id: string }>()).results.map((row) => row.id);
const deliveriesOf = async (accountId: string, paymentId: string) =>
  (await (await shardD1(accountId)).prepare("select count(*) as n from webhook_deliveries where payment_id = ?").bind(paymentId).first<{ n: number }>())!.n;

describe("Idempotency-Key on a payment creation", () => {
  it("runs the first request once; the same request again gets the stored answer, marked replayed, and nothing runs", async () => {
    const { account, client } = await makeTenant();
    const { box } = await subscribeToReceiver(client);
    const body = await paymentBody(client);
    const first = await call("POST", "/v2/payments/", { body, headers: keyed(client, "create-1") });
    expect(first.status).toBe(201);
    expect(first.headers.get("Idempotent-Replayed")).toBeNull();
    for (let i = 0; i < 2; i++) {
      const again = await call("POST", "/v2/payments/", { body, headers: keyed(client, "create-1") });
      expect(again.status).toBe(201);
      expect(again.headers.get("Idempotent-Replayed")).toBe("true");
      expect(again.json).toEqual(first.json);
    }
    expect(await paymentsOf(account.id)).toEqual([first.json.id]);
    expect(await deliveriesOf(account.id, first.json.id)).toBe(1);
    await waitFor(
      () => receivedAt(box),
      (got) => got.length >= 1,
    );
    expect((await receivedAt(box)).length).toBe(1);
  });

  it("answers 422 for the key with another body or another path, and changes nothing", async () => {
    const { account, client } = await makeTenant();
    const body = await paymentBody(client);
    const first = await call("POST", "/v2/payments/", { body, headers: keyed(client, "k") });
    expect(first.status).toBe(201);
    const otherBody = await call("POST", "/v2/payments/", { body: { ...body, payment_method: "wire" }, headers: keyed(client, "k") });
    expect(otherBody.status).toBe(422);
    expect(otherBody.json).toEqual({ detail: "Idempotency-Key was used with a different request." });
    const otherPath = await call("POST", "/v1/counterparties/", { body: { internal_id: unique("c"), type: "buyer", name: "B" }, headers: keyed(client, "k") });
    expect(otherPath.status).toBe(422);
    expect(await paymentsOf(account.id)).toEqual([first.json.id]);
    // The path is the same with or without its trailing slash; another user's key is their own.
    expect((await call("POST", "/v2/payments", { body, headers: keyed(client, "k") })).headers.get("Idempotent-Replayed")).toBe("true");
    const colleague = await makeUser(account.id, "client");
    const theirs = await call("POST", "/v2/payments/", { body, headers: keyed(colleague, "k") });
    expect(theirs.status).toBe(409); // it runs: the invoice already belongs to the first payment
    expect(theirs.json.detail).toMatch(/already belongs to payment/);
  });

  it("lets exactly one of 20 concurrent requests with one key run; the others are told it is in progress, or get its answer", async () => {
    const { account, client } = await makeTenant();
    const body = await paymentBody(client);
    const answers = await Promise.all(Array.from({ length: 20 }, () => call("POST", "/v2/payments/", { body, headers: keyed(client, "race") })));
    const ran = answers.filter((res) => res.status === 201 && res.headers.get("Idempotent-Replayed") === null);
    expect(ran).toHaveLength(1);
    for (const res of answers) {
      if (res.status === 409) expect(res.json).toEqual({ detail: "A request with this Idempotency-Key is in progress." });
      else expect(res).toMatchObject({ status: 201, json: ran[0]!.json });
    }
    expect(await paymentsOf(account.id)).toEqual([ran[0]!.json.id]);
  });

  it("stores a 4xx answer, but not a 409, so that the client may retry the conflict with the same key", async () => {
    const { client } = await makeTenant();
    const body = await paymentBody(client);
    const invalid = { ...body, payment_method: "cash" };
    const bad = await call("POST", "/v2/payments/", { body: invalid, headers: keyed(client, "bad") });
    expect(bad.status).toBe(400);
    const badAgain = await call("POST", "/v2/payments/", { body: invalid, headers: keyed(client, "bad") });
    expect(badAgain).toMatchObject({ status: 400, json: bad.json });
    expect(badAgain.headers.get("Idempotent-Replayed")).toBe("true");

    // The invoice is taken: 409, not kept. Once the other payment fails, the same key runs and succeeds.
    const holder = await call("POST", "/v2/payments/", { body, headers: client.headers });
    const clash = await call("POST", "/v2/payments/", { body, headers: keyed(client, "retry") });
    expect(clash.status).toBe(409);
    await (await shardD1(client.accountId)).prepare("update payment_invoices set released_by = payment_id where payment_id = ?").bind(holder.json.id).run();
    const retried = await call("POST", "/v2/payments/", { body, headers: keyed(client, "retry") });
    expect(retried.status).toBe(201);
    expect(retried.headers.get("Idempotent-Replayed")).toBeNull();
  });

  it("does not keep a 5xx: the same key runs again once the service is well", async () => {
    const { client } = await makeTenant();
    const body = {
      event: "payment.changed",
      url: "https://hooks.example.com/in",
      content_type: "application/json",
      username: "u-hook",
      password: "p-hook-123",
    };
    const broken = await call("POST", "/v1/webhooks/", { body, headers: keyed(client, "sub"), bindings: { ENCRYPTION_KEY: undefined } });
    expect(broken.status).toBe(500);
    const fixed = await call("POST", "/v1/webhooks/", { body, headers: keyed(client, "sub") });
    expect(fixed.status).toBe(201);
    expect(fixed.headers.get("Idempotent-Replayed")).toBeNull();
  });

  it.each([[""], ["x".repeat(256)], ["tab\there"]])("refuses the key %j with 400 and runs nothing", async (key) => {
    const { account, client } = await makeTenant();
    const body = await paymentBody(client);
    const headers = new Headers(client.headers);
    headers.set("Idempotency-Key", key);
    const res = await call("POST", "/v2/payments/", { body, headers: Object.fromEntries(headers) });
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ detail: "Idempotency-Key must be 1 to 255 printable ASCII characters." });
    expect(await paymentsOf(account.id)).toEqual([]);
  });
});

describe("Idempotency-Key on every POST", () => {
  it("replays a counterparty, an invoice and a payment event, each written once", async () => {
    const { client, processor } = await makeTenant();
    const cpty = { internal_id: unique("c"), type: "buyer", name: "Acme" };
    const c1 = await call("POST", "/v1/counterparties/", { body: cpty, headers: keyed(client, "c") });
    const c2 = await call("POST", "/v1/counterparties/", { body: cpty, headers: keyed(client, "c") });
    expect([c1.status, c2.status, c2.headers.get("Idempotent-Replayed")]).toEqual([201, 201, "true"]);
    expect(c2.json).toEqual(c1.json);

    const supplier = await makeCounterparty(client, "supplier");
    const inv = { invoice_number: unique("INV"), buyer_id: c1.json.id, supplier_id: supplier.id, amount_cents: 500 };
    const i1 = await call("POST", "/v1/invoices/", { body: inv, headers: keyed(client, "i") });
    const i2 = await call("POST", "/v1/invoices/", { body: inv, headers: keyed(client, "i") });
    expect([i1.status, i2.status, i2.json]).toEqual([201, 201, i1.json]);
    const invoices = await call("GET", `/v1/invoices/?invoice_number=${inv.invoice_number}`, { headers: client.headers });
    expect(invoices.json.count).toBe(1);

    const { payment } = await makePayment(client);
    const note = { event_code: "PU05", description: "Check printed", instrument_number: "100234" };
    const e1 = await call("POST", `/v2/payments/${payment.id}/events/`, { body: note, headers: keyed(processor, "e") });
    const e2 = await call("POST", `/v2/payments/${payment.id}/events/`, { body: note, headers: keyed(processor, "e") });
    expect([e1.status, e2.status, e2.headers.get("Idempotent-Replayed")]).toEqual([201, 201, "true"]);
    expect(e2.json).toEqual(e1.json);
    const detail = await call("GET", `/v2/payments/${payment.id}/`, { headers: client.headers });
    expect(detail.json.events.map((event: { id: string }) => event.id)).toEqual([payment.events[0].id, e1.json.id]);
  });

  it("replays a subscription and a secret rotation with the same secret, stored sealed, and rotates once", async () => {
    const { client } = await makeTenant();
    const body = {
      event: "payment.changed",
      url: "https://hooks.example.com/in",
      content_type: "application/json",
      username: "u-hook",
      password: "p-hook-secret-9",
    };
    const s1 = await call("POST", "/v1/webhooks/", { body, headers: keyed(client, "s") });
    const s2 = await call("POST", "/v1/webhooks/", { body, headers: keyed(client, "s") });
    expect([s1.status, s2.status, s2.headers.get("Idempotent-Replayed")]).toEqual([201, 201, "true"]);
    expect(s2.json).toEqual(s1.json);
    const list = await call("GET", "/v1/webhooks/", { headers: client.headers });
    expect(list.json.count).toBe(1);

    const r1 = await call("POST", `/v1/webhooks/${s1.json.id}/rotate-secret/`, { headers: keyed(client, "r") });
    const r2 = await call("POST", `/v1/webhooks/${s1.json.id}/rotate-secret/`, { headers: keyed(client, "r") });
    expect([r1.status, r2.status, r2.headers.get("Idempotent-Replayed")]).toEqual([200, 200, "true"]);
    expect(r2.json).toEqual(r1.json);
    const now = await call("GET", `/v1/webhooks/${s1.json.id}/`, { headers: client.headers });
    expect(now.json.secret).toBe(r1.json.secret);
    expect(now.json.previous_secret ?? s1.json.secret).toBe(s1.json.secret);

    const stored = await (
      await shardD1(client.accountId)
    )
      .prepare("select body, sealed from idempotency_keys where key in ('s', 'r') and account_id = ?")
      .bind(client.accountId)
      .all<{ body: string; sealed: number }>();
    expect(stored.results).toHaveLength(2);
    for (const row of stored.results) {
      expect(row.sealed).toBe(1);
      for (const secret of [s1.json.secret, r1.json.secret, "p-hook-secret-9"]) expect(row.body).not.toContain(secret);
    }
  });

  it("replays a redelivery without sending it again", async () => {
    const { client } = await makeTenant();
    const { subscription, box } = await subscribeToReceiver(client);
    await makePayment(client);
    await waitFor(
      () => receivedAt(box),
      (got) => got.length === 1,
    );
    const log = await call("GET", `/v1/webhooks/${subscription.id}/deliveries/`, { headers: client.headers });
    const deliveryId = log.json.results[0].id;
    await waitFor(
      () => call("GET", `/v1/webhooks/${subscription.id}/deliveries/${deliveryId}/`, { headers: client.headers }),
      (res) => res.json.status === "succeeded",
    );
    const path = `/v1/webhooks/${subscription.id}/deliveries/${deliveryId}/redeliver/`;
    const d1 = await call("POST", path, { headers: keyed(client, "d") });
    const d2 = await call("POST", path, { headers: keyed(client, "d") });
    expect([d1.status, d2.status, d2.headers.get("Idempotent-Replayed")]).toEqual([202, 202, "true"]);
    expect(d2.json).toEqual(d1.json);
    await waitFor(
      () => receivedAt(box),
      (got) => got.length >= 2,
    );
    const settled = await waitFor(
      () => call("GET", `/v1/webhooks/${subscription.id}/deliveries/${deliveryId}/`, { headers: client.headers }),
      (res) => res.json.status === "succeeded" && res.json.attempts.length === 2,
    );
    expect(settled.json.attempts).toHaveLength(2);
    expect((await receivedAt(box)).length).toBe(2);
  });
});

describe("a key and its write", () => {
  async function heldKey(accountId: string, username: string, key: string, body: unknown) {
    const db = createDb(await shardD1(accountId));
    const requestHash = await sha256Hex(`POST /v2/payments\n${JSON.stringify(body)}`);
    const claim: RequestKey = { accountId, username, key, token: crypto.randomUUID(), requestHash };
    await db.batch(claimStatements(db, claim, Date.now()));
    // The key's parts of the payment's batch, for a key this request claimed already.
    const keyed = keyedWrite(db, claim, async (detail: SQL, guard?: SQL) => [answerStatement(db, claim, 201, detail, false, guard)], { claimed: true });
    return { db, claim, parts: keyed };
  }
  const context = async (db: ReturnType<typeof createDb>, accountId: string, client: User) => ({
    db,
    accountId,
    caller: {
      username: client.username,
      accountId,
      role: "client" as const,
      shard: await shardOf(accountId),
      passwordHash: await sha256Hex(client.password),
      verifyEndpoints: false,
    },
    queue: { queue: env.DELIVERIES, shard: await shardOf(accountId) },
    keys: { encryptionKey: env.ENCRYPTION_KEY, allowLocalUrls: true },
  });

  it("commit together: a write that ran but never answered (a crash after its batch) is replayed, not run again", async () => {
    const { account, client } = await makeTenant();
    const body = await paymentBody(client);
    const { db, parts } = await heldKey(account.id, client.username, "crash", body);
    const outcome = await createPayment(await context(db, account.id, client), body as never, parts);
    if (!("ran" in outcome)) throw new Error("the request's own key decided otherwise");
    const written = outcome.ran;
    // The request died here, before it answered. The client retries after the lock lapses... or at once:
    const retry = await call("POST", "/v2/payments/", { body, headers: keyed(client, "crash") });
    expect(retry.status).toBe(201);
    expect(retry.headers.get("Idempotent-Replayed")).toBe("true");
    expect(retry.json).toEqual(written);
    expect(await paymentsOf(account.id)).toEqual([written.id]);
  });

  it("fail together: a write whose key another request took over writes nothing, and says so as a value", async () => {
    const { account, client } = await makeTenant();
    await subscribeToReceiver(client);
    const body = await paymentBody(client);
    const { db, parts } = await heldKey(account.id, client.username, "lapsed", body);
    // Its lock lapsed and the same request took the key over.
    await (
      await shardD1(account.id)
    )
      .prepare("update idempotency_keys set token = 'the-other-request' where key = 'lapsed' and account_id = ?")
      .bind(account.id)
      .run();
    const outcome = await createPayment(await context(db, account.id, client), body as never, parts);
    expect(outcome).toMatchObject({ decided: { decision: "in_progress" } });
    expect(await paymentsOf(account.id)).toEqual([]);
    const outbox = await (
      await shardD1(account.id)
    )
      .prepare("select count(*) as n from webhook_deliveries where account_id = ?")
      .bind(account.id)
      .first<{ n: number }>();
    expect(outbox!.n).toBe(0);
    const row = await (
      await shardD1(account.id)
    )
      .prepare("select status from idempotency_keys where key = 'lapsed' and account_id = ?")
      .bind(account.id)
      .first<{ status: number | null }>();
    expect(row!.status).toBeNull();
  });

  it("a crashed run's key is taken over by the same request once its lock lapses, and the request runs", async () => {
    const { account, client } = await makeTenant();
    const body = await paymentBody(client);
    await heldKey(account.id, client.username, "stuck", body);
    const busy = await call("POST", "/v2/payments/", { body, headers: keyed(client, "stuck") });
    expect(busy).toMatchObject({ status: 409, json: { detail: "A request with this Idempotency-Key is in progress." } });
    await (
      await shardD1(account.id)
    )
      .prepare("update idempotency_keys set locked_until = ? where key = 'stuck' and account_id = ?")
      .bind(Date.now() - 1, account.id)
      .run();
    const ran = await call("POST", "/v2/payments/", { body, headers: keyed(client, "stuck") });
    expect(ran.status).toBe(201);
    expect(ran.headers.get("Idempotent-Replayed")).toBeNull();
  });
});

describe("expiry", () => {
  it("forgets a key after 24 hours: the request runs again, and the cron trigger deletes old keys", async () => {
    const { account, client } = await makeTenant();
    const cpty = { internal_id: unique("c"), type: "buyer", name: "Acme" };
    const first = await call("POST", "/v1/counterparties/", { body: cpty, headers: keyed(client, "old") });
    expect(first.status).toBe(201);
    const dayAgo = Date.now() - KEY_TTL_MS - 1000;
    await (await shardD1(account.id)).prepare("update idempotency_keys set created_at = ? where key = 'old' and account_id = ?").bind(dayAgo, account.id).run();
    const again = await call("POST", "/v1/counterparties/", { body: cpty, headers: keyed(client, "old") });
    expect(again.status).toBe(409); // it ran again: the internal_id is taken by the first
    expect(again.headers.get("Idempotent-Replayed")).toBeNull();

    await call("POST", "/v1/counterparties/", { body: { ...cpty, internal_id: unique("c") }, headers: keyed(client, "older") });
    await (
      await shardD1(account.id)
    )
      .prepare("update idempotency_keys set created_at = ? where key = 'older' and account_id = ?")
      .bind(dayAgo, account.id)
      .run();
    expect(await forgetExpiredKeys(createDb(await shardD1(account.id)), Date.now())).toBeGreaterThanOrEqual(1);
    const left = await (await shardD1(account.id)).prepare("select key from idempotency_keys where account_id = ?").bind(account.id).all<{ key: string }>();
    expect(left.results.map((row) => row.key)).not.toContain("older");
  });
});

describe("the OpenAPI document", () => {
  it("describes the key, the replay header, 409 and 422 on every POST of the API, and on nothing else", async () => {
    const doc = (await call("GET", "/openapi.json")).json;
    const posts = Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([path, ops]) =>
      Object.entries(ops).map(([method, op]) => ({ path, method, op })),
    );
    const keyed = posts.filter(({ op }) => (op.parameters ?? []).some((p: { name: string; in: string }) => p.in === "header" && p.name === "Idempotency-Key"));
    const apiPosts = posts.filter(({ path, method }) => method === "post" && /^\/v[12]\//.test(path));
    expect(apiPosts.length).toBeGreaterThanOrEqual(7);
    expect(keyed.map(({ path, method }) => `${method} ${path}`).sort()).toEqual(apiPosts.map(({ path, method }) => `${method} ${path}`).sort());
    for (const { op } of apiPosts) {
      expect(op.responses["422"].description).toContain("Idempotency-Key was used with a different request.");
      expect(op.responses["409"].description).toContain("A request with this Idempotency-Key is in progress.");
      const success = Object.entries(op.responses).find(([status]) => status.startsWith("2"))![1] as { headers: Record<string, unknown> };
      expect(success.headers).toHaveProperty("Idempotent-Replayed");
    }
  });
});

describe("Idempotency-Key's claim in the write's round trips", () => {
  const timed = { SERVER_TIMING: "true" };

  it("rides on a write's first round trip: a keyed event or payment costs the round trips an unkeyed one does", async () => {
    const { client, processor } = await makeTenant();
    const { payment } = await makePayment(client);
    const note = { event_code: "PU05", description: "Check printed" };
    const bare = await call("POST", `/v2/payments/${payment.id}/events/`, { body: note, headers: processor.headers, bindings: timed });
    const keyedEvent = await call("POST", `/v2/payments/${payment.id}/events/`, { body: note, headers: keyed(processor, unique("k")), bindings: timed });
    expect([bare.status, keyedEvent.status]).toEqual([201, 201]);
    expect(d1Timing(keyedEvent).calls).toBe(d1Timing(bare).calls);
    expect(d1Timing(bare).calls).toBe(2); // the credential check; the event's one batch
    const buyer = await makeCounterparty(client, "buyer");
    const supplier = await makeCounterparty(client, "supplier");
    const pay = async (headers: Record<string, string>) => {
      const invoice = await makeInvoice(client, buyer.id, supplier.id);
      const body = { originating_counterparty_id: buyer.id, receiving_counterparty_id: supplier.id, invoice_ids: [invoice.id], payment_method: "ach" };
      return call("POST", "/v2/payments/", { body, headers, bindings: timed });
    };
    const [bareNew, keyedNew] = [await pay(client.headers), await pay(keyed(client, unique("k")))];
    expect([bareNew.status, keyedNew.status]).toEqual([201, 201]);
    expect(d1Timing(keyedNew).calls).toBe(d1Timing(bareNew).calls);
  });

  it("rides on a first round trip that writes, which it fails whole when the key is not the request's", async () => {
    const { client } = await makeTenant();
    const key = unique("k");
    const body = { internal_id: unique("c"), type: "buyer", name: "Acme" };
    const bare = await call("POST", "/v1/counterparties/", { body: { ...body, internal_id: unique("c") }, headers: client.headers, bindings: timed });
    const first = await call("POST", "/v1/counterparties/", { body, headers: keyed(client, key), bindings: timed });
    const again = await call("POST", "/v1/counterparties/", { body, headers: keyed(client, key), bindings: timed });
    expect(d1Timing(first).calls).toBe(d1Timing(bare).calls);
    expect([first.status, again.status, again.headers.get("Idempotent-Replayed"), again.json]).toEqual([201, 201, "true", first.json]);
    // The replay's write was refused whole (the count below): the key's row, read after, says what it gets.
    const conflicting = await call("POST", "/v1/counterparties/", { body: { ...body, name: "Other" }, headers: keyed(client, key) });
    expect([conflicting.status, conflicting.json]).toEqual([422, { detail: "Idempotency-Key was used with a different request." }]);
    expect((await call("GET", `/v1/counterparties/?internal_id=${body.internal_id}`, { headers: client.headers })).json.count).toBe(1);
  });

  it("is made after an answer given before any read (a body refused), which then answers as the key says", async () => {
    const { client } = await makeTenant();
    const used = unique("k");
    const good = { internal_id: unique("c"), type: "buyer", name: "Acme" };
    expect((await call("POST", "/v1/counterparties/", { body: good, headers: keyed(client, used) })).status).toBe(201);
    // The key of another body: 422, though this body alone would be a 400.
    const other = await call("POST", "/v1/counterparties/", { body: { type: "nonsense" }, headers: keyed(client, used) });
    expect([other.status, other.json]).toEqual([422, { detail: "Idempotency-Key was used with a different request." }]);
    // A new key with a refused body: the 400 is stored and replayed.
    const fresh = unique("k");
    const refused = await call("POST", "/v1/counterparties/", { body: { type: "nonsense" }, headers: keyed(client, fresh) });
    const replayed = await call("POST", "/v1/counterparties/", { body: { type: "nonsense" }, headers: keyed(client, fresh) });
    expect(refused.status).toBe(400);
    expect([replayed.status, replayed.headers.get("Idempotent-Replayed"), replayed.json]).toEqual([400, "true", refused.json]);
  });
});
