import { afterEach, describe, expect, it, vi } from "vitest";

afterEach(() => {
  vi.restoreAllMocks();
});
import { BASE, call, makePayment, makeTenant, type User, shardD1 } from "../helpers/api";
import { HOOK_USER, mailbox, receivedAt, receiverUrl, waitFor } from "../helpers/webhooks";

const valid = () => ({ event: "payment.changed", url: "https://hooks.example.com/payments", content_type: "application/json", ...HOOK_USER });
const create = (user: User, body: Record<string, unknown>) => call("POST", "/v1/webhooks/", { body, headers: user.headers });

describe("webhook subscriptions", () => {
  it("creates one and echoes every field, with a generated secret", async () => {
    const { client } = await makeTenant();
    const res = await create(client, { ...valid(), payment_status: true });
    expect(res.status).toBe(201);
    expect(res.json).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
      user: client.username,
      event: "payment.changed",
      url: "https://hooks.example.com/payments",
      content_type: "application/json",
      description: null,
      username: HOOK_USER.username,
      password: HOOK_USER.password,
      invoice_ids: false,
      payment_status: true,
      payment_events: false,
      refund_reason: false,
      instrument_number: false,
      all_payment_details: false,
      is_active: true,
      filters: null,
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
      signing: "hmac",
      ordering: "none",
      lag_alert_ms: 60000,
      public_key: null,
      verification: "not_required",
      secrets_readable: true,
      subscription: `${BASE}/v1/webhooks/${res.json.id}/`,
      created_at: expect.stringMatching(/\.\d{3}Z$/),
      updated_at: res.json.created_at,
    });
    expect((await call("GET", `/v1/webhooks/${res.json.id}/`, { headers: client.headers })).json).toEqual(res.json);
    const list = await call("GET", "/v1/webhooks/", { headers: client.headers });
    expect(list.json).toMatchObject({ count: 1, next: null, previous: null, results: [res.json] });
  });

  it("stores credentials and the secret encrypted", async () => {
    const { client } = await makeTenant();
    const res = await create(client, valid());
    const row = await (
      await shardD1(client.accountId)
    )
      .prepare("select * from webhook_subscriptions where id = ?")
      .bind(res.json.id)
      .first<Record<string, unknown>>();
    const stored = JSON.stringify(row);
    expect(stored).not.toContain(HOOK_USER.password);
    expect(stored).not.toContain(HOOK_USER.username);
    expect(stored).not.toContain(res.json.secret.slice(6));
    expect(row!.secret).toMatch(/^v2\.[0-9a-f]{16}\./);
  });

  it.each([
    [{ event: "payment.created" }, "event"],
    [{ url: `https://hooks.example.com/${"x".repeat(170)}` }, "url"],
    [{ url: "not a url" }, "url"],
    [{ content_type: "text/xml" }, "content_type"],
    [{ username: "" }, "username"],
    [{ password: "p".repeat(191) }, "password"],
    [{ invoice_ids: "yes" }, "invoice_ids"],
    [{ url: undefined }, "url"],
  ])("refuses %j naming the field", async (override, field) => {
    const { client } = await makeTenant();
    const res = await create(client, { ...valid(), ...override });
    expect(res.status).toBe(400);
    expect(Object.keys(res.json)).toEqual([field]);
  });

  it("refuses the caller's own username or password as the subscriber's credentials", async () => {
    const { client } = await makeTenant();
    const mine = await create(client, { ...valid(), username: client.username, password: client.password });
    expect(mine.status).toBe(400);
    expect(Object.keys(mine.json).sort()).toEqual(["password", "username"]);
  });

  it.each([
    [{ username: "hook:user" }, { username: ["A username cannot contain a colon (:): HTTP Basic ends the username there."] }],
    [{ username: "hook\nuser" }, { username: ["Control characters are not allowed."] }],
    [{ password: "pass\u0000word" }, { password: ["Control characters are not allowed."] }],
    [{ password: "pass\u0085word" }, { password: ["Control characters are not allowed."] }],
  ])("refuses credentials HTTP Basic cannot carry: %j", async (fields, errors) => {
    const { client } = await makeTenant();
    const res = await call("POST", "/v1/webhooks/", { body: { ...valid(), ...fields }, headers: client.headers });
    expect(res.status).toBe(400);
    expect(res.json).toEqual(errors);
  });

  it("takes a colon in the password, which HTTP Basic carries", async () => {
    const { client } = await makeTenant();
    const res = await call("POST", "/v1/webhooks/", { body: { ...valid(), password: "pa:ss:€" }, headers: client.headers });
    expect(res.status).toBe(201);
    expect(res.json.password).toBe("pa:ss:€");
  });

  it("leaves no health buckets behind when deleted while an attempt is in flight", async () => {
    const { client } = await makeTenant();
    const path = `/hooks/${crypto.randomUUID()}`;
    const made = await create(client, { ...valid(), url: `${receiverUrl()}${path}` });
    await mailbox({ secret: made.json.secret, ...HOOK_USER, delayMs: 1500 }, path);
    const box = { path, url: `${receiverUrl()}${path}` };
    await makePayment(client);
    await waitFor(
      () => receivedAt(box),
      (all) => all.length === 1,
    );
    expect((await call("DELETE", `/v1/webhooks/${made.json.id}/`, { headers: client.headers })).status).toBe(204);
    // The attempt ends after the delete, and is recorded then.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    const { results } = await (
      await shardD1(client.accountId)
    )
      .prepare("select count(*) as n from webhook_stats where subscription_id = ?")
      .bind(made.json.id)
      .run();
    expect(results[0]).toEqual({ n: 0 });
  });

  it("applies the URL policy when local URLs are not allowed", async () => {
    const { client } = await makeTenant();
    for (const url of [
      "http://hooks.example.com/x",
      "https://127.0.0.1/x",
      "https://localhost/x",
      "https://10.1.2.3/x",
      "https://[::1]/x",
      "https://169.254.169.254/x",
      "https://a:b@hooks.example.com/x",
      "https://[64:ff9b::7f00:1]/x",
      "https://[::127.0.0.1]/x",
      "https://localhost../x",
      "https://metadata.google.internal/x",
      "https://hooks.example.com:22/x",
    ]) {
      const res = await call("POST", "/v1/webhooks/", { body: { ...valid(), url }, headers: client.headers, bindings: { ALLOW_LOCAL_WEBHOOK_URLS: "false" } });
      expect(res.status, url).toBe(400);
      expect(Object.keys(res.json)).toEqual(["url"]);
    }
    const ok = await call("POST", "/v1/webhooks/", { body: valid(), headers: client.headers, bindings: { ALLOW_LOCAL_WEBHOOK_URLS: "false" } });
    expect(ok.status).toBe(201);
    const local = await create(client, { ...valid(), url: `${receiverUrl()}/hooks/x` });
    expect(local.status).toBe(201);
  });

  it("patches part and puts the whole", async () => {
    const { client } = await makeTenant();
    const made = (await create(client, { ...valid(), payment_status: true })).json;
    const patched = await call("PATCH", `/v1/webhooks/${made.id}/`, {
      body: { invoice_ids: true, is_active: false, password: "new-pass" },
      headers: client.headers,
    });
    expect(patched.status).toBe(200);
    expect(patched.json).toMatchObject({
      invoice_ids: true,
      payment_status: true,
      is_active: false,
      password: "new-pass",
      username: HOOK_USER.username,
      secret: made.secret,
    });
    const put = await call("PUT", `/v1/webhooks/${made.id}`, { body: { ...valid(), url: "https://other.example.com/h" }, headers: client.headers });
    expect(put.status).toBe(200);
    expect(put.json).toMatchObject({
      url: "https://other.example.com/h",
      invoice_ids: false,
      payment_status: false,
      is_active: false,
      password: HOOK_USER.password,
    });
    const partialPut = await call("PUT", `/v1/webhooks/${made.id}/`, { body: { invoice_ids: true }, headers: client.headers });
    expect(partialPut.status).toBe(400);
    expect(Object.keys(partialPut.json).sort()).toEqual(["content_type", "event", "password", "url", "username"]);
    const badPatch = await call("PATCH", `/v1/webhooks/${made.id}/`, { body: { username: client.username }, headers: client.headers });
    expect(badPatch.status).toBe(400);
  });

  it("keeps a description for people: trimmed, at most 190 characters, never blank, cleared by null or by PUT without one", async () => {
    const { client } = await makeTenant();
    const made = await create(client, { ...valid(), description: "  ERP sync (production) — 本番  " });
    expect(made.status).toBe(201);
    expect(made.json.description).toBe("ERP sync (production) — 本番");
    expect((await call("GET", `/v1/webhooks/${made.json.id}/`, { headers: client.headers })).json.description).toBe("ERP sync (production) — 本番");
    const path = `/v1/webhooks/${made.json.id}/`;
    expect((await call("PATCH", path, { body: { payment_status: true }, headers: client.headers })).json.description).toBe("ERP sync (production) — 本番");
    expect((await call("PATCH", path, { body: { description: "x".repeat(190) }, headers: client.headers })).json.description).toBe("x".repeat(190));
    const tooLong = await call("PATCH", path, { body: { description: "x".repeat(191) }, headers: client.headers });
    expect(tooLong.status).toBe(400);
    expect(Object.keys(tooLong.json)).toEqual(["description"]);
    expect((await call("PATCH", path, { body: { description: "line\nbreak" }, headers: client.headers })).json).toEqual({
      description: ["Control characters are not allowed."],
    });
    expect((await call("PATCH", path, { body: { description: "   " }, headers: client.headers })).json).toEqual({
      description: ["This field may not be blank."],
    });
    expect((await call("PATCH", path, { body: { description: "named" }, headers: client.headers })).json.description).toBe("named");
    expect((await call("PATCH", path, { body: { description: null }, headers: client.headers })).json.description).toBeNull();
    await call("PATCH", path, { body: { description: "named again" }, headers: client.headers });
    expect((await call("PUT", path, { body: valid(), headers: client.headers })).json.description).toBeNull();
    expect((await call("GET", "/v1/webhooks/", { headers: client.headers })).json.results[0].description).toBeNull();
  });

  it("holds an account to 20 subscriptions, even when they are created at once", async () => {
    const { client } = await makeTenant();
    const made = await Promise.all(Array.from({ length: 24 }, (_, i) => create(client, { ...valid(), url: `https://hooks.example.com/${i}` })));
    expect(made.filter((res) => res.status === 201)).toHaveLength(20);
    for (const refused of made.filter((res) => res.status !== 201))
      expect(refused).toMatchObject({ status: 409, json: { detail: "An account has at most 20 webhook subscriptions." } });
    expect((await call("GET", "/v1/webhooks/", { headers: client.headers })).json.count).toBe(20);
    // Another account is not held back; deleting one makes room.
    expect((await create((await makeTenant()).client, valid())).status).toBe(201);
    const first = made.find((res) => res.status === 201)!.json;
    expect((await call("DELETE", `/v1/webhooks/${first.id}/`, { headers: client.headers })).status).toBe(204);
    expect((await create(client, valid())).status).toBe(201);
    expect((await create(client, valid())).status).toBe(409);
  });

  it("rotates the secret", async () => {
    const { client } = await makeTenant();
    const made = (await create(client, valid())).json;
    const rotated = await call("POST", `/v1/webhooks/${made.id}/rotate-secret/`, { headers: client.headers });
    expect(rotated.status).toBe(200);
    expect(rotated.json.secret).toMatch(/^whsec_/);
    expect(rotated.json.secret).not.toBe(made.secret);
    const row = await (
      await shardD1(client.accountId)
    )
      .prepare("select previous_secret_expires_at as until from webhook_subscriptions where id = ?")
      .bind(made.id)
      .first<{ until: number }>();
    expect(row!.until - Date.now()).toBeGreaterThan(23.9 * 3600 * 1000);
  });

  it("deletes with 204, and the record is gone", async () => {
    const { client } = await makeTenant();
    const made = (await create(client, valid())).json;
    expect((await call("DELETE", `/v1/webhooks/${made.id}/`, { headers: client.headers })).status).toBe(204);
    expect((await call("GET", `/v1/webhooks/${made.id}/`, { headers: client.headers })).status).toBe(404);
  });

  it("answers 404 for another account's subscription and its deliveries on every path", async () => {
    const a = await makeTenant();
    const b = await makeTenant();
    const theirs = (await create(b.client, valid())).json;
    const fake = "00000000-0000-4000-8000-000000000000";
    for (const [method, path, body] of [
      ["GET", `/v1/webhooks/${theirs.id}/`],
      ["PATCH", `/v1/webhooks/${theirs.id}/`, { is_active: false }],
      ["PUT", `/v1/webhooks/${theirs.id}/`, valid()],
      ["DELETE", `/v1/webhooks/${theirs.id}/`],
      ["POST", `/v1/webhooks/${theirs.id}/rotate-secret/`],
      ["GET", `/v1/webhooks/${theirs.id}/deliveries/`],
      ["GET", `/v1/webhooks/${theirs.id}/deliveries/${fake}/`],
      ["POST", `/v1/webhooks/${theirs.id}/deliveries/${fake}/redeliver/`],
    ] as const) {
      const res = await call(method, path, { body, headers: a.client.headers });
      expect(res.status, `${method} ${path}`).toBe(404);
    }
    expect((await call("GET", "/v1/webhooks/", { headers: a.client.headers })).json.count).toBe(0);
    const still = await call("GET", `/v1/webhooks/${theirs.id}/`, { headers: b.client.headers });
    expect(still.json).toEqual(theirs);
  });

  it("answers 500 'Service is not configured.' without a usable ENCRYPTION_KEY", async () => {
    const { client } = await makeTenant();
    for (const key of [undefined, "", "not-base64!!", btoa("too short")]) {
      const res = await call("POST", "/v1/webhooks/", { body: valid(), headers: client.headers, bindings: { ENCRYPTION_KEY: key } });
      expect(res.status).toBe(500);
      expect(res.json).toEqual({ detail: "Service is not configured." });
    }
  });

  it("reports a subscription sealed with another ENCRYPTION_KEY, lets it be read and deleted, and never answers 500", async () => {
    const { client } = await makeTenant();
    const sealed = (await create(client, valid())).json;
    const readable = (await create(client, { ...valid(), url: "https://hooks.example.com/other" })).json;
    const otherKey = { ENCRYPTION_KEY: btoa(String.fromCharCode(...new Uint8Array(32).fill(7))) };
    const errors = vi.spyOn(console, "error");
    // The key changes (as when .dev.vars is made again): nothing new is sealed under a key that opens none of the stored rows.
    const fresh = await call("POST", "/v1/webhooks/", { body: valid(), headers: client.headers, bindings: otherKey });
    expect(fresh).toMatchObject({ status: 500, json: { detail: "Service is not configured." } });

    const list = await call("GET", "/v1/webhooks/", { headers: client.headers, bindings: otherKey });
    expect(list.status).toBe(200);
    const byId = new Map(list.json.results.map((row: { id: string }) => [row.id, row]));
    for (const old of [sealed, readable]) {
      expect(byId.get(old.id)).toEqual({ ...old, username: null, password: null, secret: null, secrets_readable: false });
    }
    const logged = errors.mock.calls.map(([line]) => JSON.parse(String(line)));
    expect(logged).toContainEqual(expect.objectContaining({ type: "subscription_unreadable", subscription_id: sealed.id }));
    expect(JSON.stringify(logged)).not.toContain(HOOK_USER.password);

    const one = await call("GET", `/v1/webhooks/${sealed.id}/`, { headers: client.headers, bindings: otherKey });
    expect(one).toMatchObject({ status: 200, json: { secrets_readable: false, secret: null } });
    for (const [method, path, body] of [
      ["PATCH", `/v1/webhooks/${sealed.id}/`, { is_active: false }],
      ["PUT", `/v1/webhooks/${sealed.id}/`, valid()],
      ["POST", `/v1/webhooks/${sealed.id}/rotate-secret/`, undefined],
    ] as const) {
      const res = await call(method, path, { body, headers: client.headers, bindings: otherKey });
      expect(res.status, `${method} ${path}`).toBe(409);
      expect(res.json.detail).toContain("sealed with another ENCRYPTION_KEY");
    }
    expect((await call("DELETE", `/v1/webhooks/${sealed.id}/`, { headers: client.headers, bindings: otherKey })).status).toBe(204);
    // With the original key back, the untouched one reads again.
    expect((await call("GET", `/v1/webhooks/${readable.id}/`, { headers: client.headers })).json).toEqual(readable);
  });
});
