import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createPaymentsClient } from "../../packages/client/src/index";
import document from "../../packages/client/openapi.json";
import { createDb } from "../../src/db/client";
import worker from "../../src/index";
import { continueMoves } from "../../src/services/moves";
import { BASE, unique } from "../helpers/api";
import { HOOK_USER, receiverUrl } from "../helpers/webhooks";

/**
 * The generated client (packages/client) used as a user would: every operation of the document is
 * called once, type-checked by `npm run typecheck` (tsc over test/) and answered by the Worker.
 * The operations called are recorded from the client's own middleware and compared with the document's.
 */
async function send(request: Request): Promise<Response> {
  const ctx = createExecutionContext();
  const response = await worker.fetch(request as Parameters<typeof worker.fetch>[0], env, ctx);
  await waitOnExecutionContext(ctx);
  return response;
}

const called = new Set<string>();
function recording<T extends { use: (middleware: { onRequest: (options: { request: Request; schemaPath: string }) => Request }) => void }>(client: T): T {
  client.use({
    onRequest({ request, schemaPath }) {
      called.add(`${request.method} ${schemaPath}`);
      return request;
    },
  });
  return client;
}

const documented = Object.entries(document.paths).flatMap(([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`));

describe("a client generated from /openapi.json", () => {
  it("calls every operation, each answered as its types say", async () => {
    const admin = recording(createPaymentsClient({ baseUrl: BASE, auth: { token: env.ADMIN_TOKEN! }, fetch: send }));

    expect((await admin.GET("/healthz")).data).toEqual({ status: "ok" });

    const account = await admin.POST("/admin/accounts/", { body: { name: unique("client-account") } });
    expect(account.response.status).toBe(201);
    const accountId = account.data!.id;
    expect((await admin.GET("/admin/accounts/", { params: { query: { page_size: 1000 } } })).data!.results.map((row) => row.id)).toContain(accountId);

    // An API user with the default role is a client; the processor records events.
    const clientUser = await admin.POST("/admin/accounts/{account_id}/api-users/", {
      params: { path: { account_id: accountId } },
      body: { username: unique("client") },
    });
    expect(clientUser.data!.role).toBe("client");
    const processorName = unique("processor");
    const made = await admin.POST("/admin/accounts/{account_id}/api-users/", {
      params: { path: { account_id: accountId } },
      body: { username: processorName, role: "processor" },
    });
    const rotated = await admin.POST("/admin/accounts/{account_id}/api-users/{username}/rotate/", {
      params: { path: { account_id: accountId, username: processorName } },
    });
    expect(rotated.data!.password).not.toBe(made.data!.password);
    const api = recording(createPaymentsClient({ baseUrl: BASE, auth: { username: processorName, password: rotated.data!.password }, fetch: send }));

    const buyer = await api.POST("/v1/counterparties/", { body: { internal_id: unique("b"), type: "buyer", name: "Acme" } });
    const supplier = await api.POST("/v1/counterparties/", { body: { internal_id: unique("s"), type: "supplier", name: "Northwind" } });
    expect(buyer.response.status).toBe(201);
    const buyerId = buyer.data!.id;
    const supplierId = supplier.data!.id;
    expect((await api.PATCH("/v1/counterparties/{id}/", { params: { path: { id: buyerId } }, body: { name: "Acme Corp" } })).data!.name).toBe("Acme Corp");
    expect((await api.GET("/v1/counterparties/{id}/", { params: { path: { id: supplierId } } })).data!.type).toBe("supplier");
    expect((await api.GET("/v1/counterparties/", { params: { query: { type: ["buyer"] } } })).data!.results.map((row) => row.id)).toEqual([buyerId]);

    // The invoice's currency has a default: the client may leave it out.
    const invoice = await api.POST("/v1/invoices/", {
      body: { invoice_number: unique("INV"), buyer_id: buyerId, supplier_id: supplierId, amount_cents: 1250 },
    });
    expect(invoice.data!.currency).toBe("USD");
    const invoiceId = invoice.data!.id;
    expect((await api.GET("/v1/invoices/{id}/", { params: { path: { id: invoiceId } } })).data!.amount_cents).toBe(1250);
    expect((await api.GET("/v1/invoices/", {})).data!.count).toBe(1);

    // A subscription with only the required fields: every flag has a default.
    const hook = await api.POST("/v1/webhooks/", {
      body: { event: "payment.changed", url: `${receiverUrl()}/hooks/${unique("client")}`, content_type: "application/json", ...HOOK_USER },
    });
    expect(hook.response.status).toBe(201);
    const hookId = hook.data!.id;
    const path = { id: hookId };
    expect((await api.GET("/v1/webhooks/", {})).data!.results.map((row) => row.id)).toEqual([hookId]);
    expect((await api.PATCH("/v1/webhooks/{id}/", { params: { path }, body: { payment_status: true } })).data!.payment_status).toBe(true);
    const replaced = await api.PUT("/v1/webhooks/{id}/", {
      params: { path },
      body: { event: "payment.changed", url: hook.data!.url, content_type: "application/x-www-form-urlencoded", ...HOOK_USER },
    });
    expect(replaced.data!.content_type).toBe("application/x-www-form-urlencoded");
    expect((await api.GET("/v1/webhooks/{id}/", { params: { path } })).data!.payment_status).toBe(false);
    expect((await api.POST("/v1/webhooks/{id}/rotate-secret/", { params: { path } })).data!.secret).toMatch(/^whsec_/);
    // An Ed25519 subscription's public key.
    const signed = await api.POST("/v1/webhooks/", {
      body: { event: "payment.changed", url: `${receiverUrl()}/hooks/${unique("client")}`, content_type: "application/json", signing: "ed25519", ...HOOK_USER },
    });
    const publicKey = await api.GET("/v1/webhooks/{id}/public-key/", { params: { path: { id: signed.data!.id } } });
    expect(publicKey.data!.public_key).toBe(signed.data!.public_key);
    // Its keys as a JWK Set, with no credentials.
    const jwks = await api.GET("/v1/webhooks/{id}/jwks/", { params: { path: { id: signed.data!.id } } });
    expect(jwks.data!.keys.map((key) => [key.kty, key.crv, key.alg])).toEqual([["OKP", "Ed25519", "EdDSA"]]);
    expect((await api.DELETE("/v1/webhooks/{id}/", { params: { path: { id: signed.data!.id } } })).response.status).toBe(204);

    const payment = await api.POST("/v2/payments/", {
      body: { originating_counterparty_id: buyerId, receiving_counterparty_id: supplierId, invoice_ids: [invoiceId], payment_method: "ach" },
    });
    expect(payment.response.status).toBe(201);
    const paymentId = payment.data!.id;
    const event = await api.POST("/v2/payments/{id}/events/", { params: { path: { id: paymentId } }, body: { event_code: "PU01", description: "Sent" } });
    expect(event.response.status).toBe(201);
    expect((await api.GET("/v2/payments/{id}/", { params: { path: { id: paymentId } } })).data!.events).toHaveLength(2);
    expect((await api.GET("/v2/payments/", { params: { query: { ordering: "updated" } } })).data!.results.map((row) => row.id)).toEqual([paymentId]);

    const test = await api.POST("/v1/webhooks/{id}/test/", { params: { path } });
    expect(test.response.status).toBe(202);
    expect(test.data!.test).toBe(true);
    const deliveries = await api.GET("/v1/webhooks/{id}/deliveries/", { params: { path } });
    expect(deliveries.data!.count).toBeGreaterThanOrEqual(3);
    const delivery = { id: hookId, delivery_id: test.data!.id };
    expect((await api.GET("/v1/webhooks/{id}/deliveries/{delivery_id}/", { params: { path: delivery } })).data!.id).toBe(test.data!.id);
    expect((await api.POST("/v1/webhooks/{id}/deliveries/{delivery_id}/redeliver/", { params: { path: delivery } })).response.status).toBe(202);
    const recovered = await api.POST("/v1/webhooks/{id}/recover/", { params: { path }, body: { since: new Date(Date.now() - 3_600_000).toISOString() } });
    expect(recovered.data!.recovered).toBe(0);
    expect((await api.GET("/v1/webhooks/{id}/stats/", { params: { path } })).data!.held).toBe(0);
    expect((await api.POST("/v1/webhooks/{id}/filters/test/", { params: { path }, body: { payment_id: paymentId } })).data).toEqual({ matches: true });
    const feed = await api.GET("/v1/webhooks/{id}/feed/", { params: { path, query: { limit: "1" } } });
    expect(feed.data!.results.map((item) => item.sequence)).toEqual([1]);
    expect((await api.POST("/v1/webhooks/{id}/feed/ack/", { params: { path }, body: { cursor: feed.data!.next } })).data).toEqual({ cursor: feed.data!.next });
    expect((await api.POST("/v1/webhooks/{id}/held/discard/", { params: { path } })).response.status).toBe(409);
    // Nothing has been archived yet (retention removes deliveries RETENTION_DAYS after they end).
    const archive = await api.GET("/v1/webhooks/{id}/archive/{day}/", {
      params: { path: { id: hookId, day: new Date().toISOString().slice(0, 10) } },
      parseAs: "stream",
    });
    expect(archive.response.status).toBe(404);
    // A replay of the last hour: counted, started, listed, read and canceled (or done already).
    const since = new Date(Date.now() - 3_600_000).toISOString();
    expect((await api.POST("/v1/webhooks/{id}/replay/", { params: { path }, body: { since, dry_run: true } })).response.status).toBe(200);
    const replay = await api.POST("/v1/webhooks/{id}/replay/", { params: { path }, body: { since } });
    expect(replay.response.status).toBe(202);
    const ofReplay = { params: { path: { id: hookId, replay_id: (replay.data as { id: string }).id } } };
    expect((await api.GET("/v1/webhooks/{id}/replays/", { params: { path } })).data!.results.map((r) => r.id)).toEqual([ofReplay.params.path.replay_id]);
    expect((await api.GET("/v1/webhooks/{id}/replays/{replay_id}/", ofReplay)).data!.since).toBe(since);
    expect(["canceled", "done"]).toContain((await api.DELETE("/v1/webhooks/{id}/replays/{replay_id}/", ofReplay)).data!.status);
    // Its account does not require proof of endpoint ownership: no challenge to send.
    expect((await api.POST("/v1/webhooks/{id}/verify/", { params: { path } })).response.status).toBe(409);
    expect((await api.DELETE("/v1/webhooks/{id}/", { params: { path } })).response.status).toBe(204);

    expect((await admin.POST("/admin/encryption/reseal/", {})).response.status).toBe(200);
    expect(
      (await admin.PATCH("/admin/accounts/{account_id}/", { params: { path: { account_id: accountId } }, body: { verify_endpoints: false } })).data,
    ).toMatchObject({
      verify_endpoints: false,
    });
    const shards = (await admin.GET("/admin/shards/")).data!;
    expect(shards.map((shard) => shard.name)).toEqual(["A", "B"]);
    expect(shards.find((shard) => shard.name === account.data!.shard)!.accounts).toBeGreaterThanOrEqual(1);
    expect((await admin.PATCH("/admin/shards/{name}/", { params: { path: { name: "B" } }, body: { open: true } })).data).toMatchObject({
      name: "B",
      open: true,
    });
    const other = account.data!.shard === "A" ? "B" : "A";
    // A move started, then canceled before its cut-over: the account stays where it is.
    const ofAccount = { params: { path: { account_id: accountId } } };
    expect((await admin.POST("/admin/accounts/{account_id}/move/", { ...ofAccount, body: { shard: other } })).response.status).toBe(202);
    expect((await admin.DELETE("/admin/accounts/{account_id}/move/", ofAccount)).data).toMatchObject({
      shard: account.data!.shard,
      move: { to: other, state: "canceling" },
    });
    for (let i = 0; i < 200 && (await admin.GET("/admin/accounts/{account_id}/", ofAccount)).data!.move; i++) await continueMoves(createDb(env.DB), env);
    const moving = await admin.POST("/admin/accounts/{account_id}/move/", { params: { path: { account_id: accountId } }, body: { shard: other } });
    expect([moving.response.status, moving.data!.move?.to]).toEqual([202, other]);
    for (let i = 0; i < 10 && (await admin.GET("/admin/accounts/{account_id}/", { params: { path: { account_id: accountId } } })).data!.move; i++)
      await continueMoves(createDb(env.DB), env);
    expect((await admin.GET("/admin/accounts/{account_id}/", { params: { path: { account_id: accountId } } })).data).toMatchObject({
      shard: other,
      move: null,
    });
    expect(
      (await admin.DELETE("/admin/accounts/{account_id}/api-users/{username}/", { params: { path: { account_id: accountId, username: processorName } } }))
        .response.status,
    ).toBe(204);
    expect((await api.GET("/v1/counterparties/", {})).response.status).toBe(401);
    expect((await admin.DELETE("/admin/accounts/{account_id}/", { params: { path: { account_id: accountId } } })).data!.detail).toBe(
      "The account is being erased.",
    );

    expect([...called].sort()).toEqual([...documented].sort());
  });

  it("sends an Idempotency-Key on every POST, so a retried call is answered once", async () => {
    const admin = createPaymentsClient({ baseUrl: BASE, auth: { token: env.ADMIN_TOKEN! }, fetch: send, idempotencyKey: () => "fixed-key-for-this-test" });
    const account = (await admin.POST("/admin/accounts/", { body: { name: unique("idem") } })).data!;
    const user = (
      await admin.POST("/admin/accounts/{account_id}/api-users/", { params: { path: { account_id: account.id } }, body: { username: unique("u") } })
    ).data!;
    const key = unique("key");
    const api = createPaymentsClient({ baseUrl: BASE, auth: { username: user.username, password: user.password }, fetch: send, idempotencyKey: () => key });
    const body = { internal_id: unique("b"), type: "buyer" as const, name: "Once" };
    const first = await api.POST("/v1/counterparties/", { body });
    const again = await api.POST("/v1/counterparties/", { body });
    expect(again.data!.id).toBe(first.data!.id);
    expect(again.response.headers.get("idempotent-replayed")).toBe("true");
    expect((await api.GET("/v1/counterparties/", {})).data!.count).toBe(1);
  });

  it("follows next through every page of a list", async () => {
    const admin = createPaymentsClient({ baseUrl: BASE, auth: { token: env.ADMIN_TOKEN! }, fetch: send });
    const account = (await admin.POST("/admin/accounts/", { body: { name: unique("pages") } })).data!;
    const user = (
      await admin.POST("/admin/accounts/{account_id}/api-users/", { params: { path: { account_id: account.id } }, body: { username: unique("u") } })
    ).data!;
    const api = createPaymentsClient({ baseUrl: BASE, auth: { username: user.username, password: user.password }, fetch: send });
    const made: string[] = [];
    for (let i = 0; i < 7; i++)
      made.push((await api.POST("/v1/counterparties/", { body: { internal_id: `p-${i}`, type: "supplier", name: `S${i}` } })).data!.id);
    const seen: string[] = [];
    for await (const row of api.each("/v1/counterparties/", { params: { query: { page_size: 3 } } })) seen.push(row.id);
    expect(seen).toEqual(made);
  });
});
