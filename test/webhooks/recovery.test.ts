import { describe, expect, it } from "vitest";
import { wholeList, call, makePayment, makeTenant, type User, shardD1 } from "../helpers/api";
import { HOOK_USER, receivedAt, subscribeToReceiver, waitFor } from "../helpers/webhooks";

const deliveryOf = (user: User, subscriptionId: string, deliveryId: string) =>
  call("GET", `/v1/webhooks/${subscriptionId}/deliveries/${deliveryId}/`, { headers: user.headers });
const logOf = async (user: User, subscriptionId: string) =>
  (await wholeList(`/v1/webhooks/${subscriptionId}/deliveries/`, user.headers)).json.results as { id: string; status: string; created: string }[];

describe("POST /v1/webhooks/{id}/test/", () => {
  it("sends the example payment when the account has none: signed, verified by standardwebhooks, marked test in the log with the headers it sent", async () => {
    const { client } = await makeTenant();
    const { subscription, box } = await subscribeToReceiver(client, { all_payment_details: true });
    const res = await call("POST", `/v1/webhooks/${subscription.id}/test/`, { headers: client.headers });
    expect(res.status).toBe(202);
    expect(res.json).toMatchObject({ payment_id: "pmt_test", status: "pending", test: true, attempts: [], headers: null });
    const body = JSON.parse(res.json.body);
    expect(body).toMatchObject({ object_type: "payment", object_id: "pmt_test", event: "payment.changed", test: true });
    expect(body.object).toMatchObject({ id: "pmt_test", status: "pending", events: [{ event_code: "PU00" }] });

    const [got] = await waitFor(
      () => receivedAt(box),
      (received) => received.length === 1,
    );
    expect(got!.verified).toEqual({ basic: true, hmac: true, standard: true, kit: true });
    expect(got!.body).toBe(res.json.body);
    const logged = await waitFor(
      () => deliveryOf(client, subscription.id, res.json.id),
      (r) => r.json.status === "succeeded",
    );
    expect(logged.json.test).toBe(true);
    expect(logged.json.headers).toMatchObject({
      authorization: "Basic ********",
      "content-type": "application/json",
      "webhook-id": res.json.id,
      "hook-delivery": res.json.id,
      "webhook-signature": got!.headers["webhook-signature"],
    });
    // The log shows every header as it arrived (the credentials masked), in the order they were sent.
    const shown = Object.entries(logged.json.headers as Record<string, string>);
    expect(shown.map(([name]) => name)).toEqual([
      "authorization",
      "content-type",
      "hook-subscription",
      "hook-delivery",
      "hook-event",
      "user-agent",
      "hook-hmac",
      "webhook-id",
      "webhook-timestamp",
      "webhook-signature",
    ]);
    for (const [name, value] of shown) if (name !== "authorization") expect([name, got!.headers[name]]).toEqual([name, value]);
    expect(JSON.stringify(logged.json)).not.toContain(btoa(`${HOOK_USER.username}:${HOOK_USER.password}`));
    // Ordinary deliveries say test: false.
    await makePayment(client);
    const log = await waitFor(
      () => logOf(client, subscription.id),
      (rows) => rows.length === 2,
    );
    const ordinary = log.find((row) => row.id !== res.json.id)!;
    expect((await deliveryOf(client, subscription.id, ordinary.id)).json.test).toBe(false);
  });

  it("describes the account's most recent payment, as the subscription's flags and content type shape it", async () => {
    const { client } = await makeTenant();
    await makePayment(client);
    const { payment: latest } = await makePayment(client);
    const { subscription, box } = await subscribeToReceiver(client, { content_type: "application/x-www-form-urlencoded", payment_status: true });
    const res = await call("POST", `/v1/webhooks/${subscription.id}/test/`, { headers: client.headers });
    expect(res.status).toBe(202);
    expect(res.json.payment_id).toBe(latest.id);
    const form = new URLSearchParams(res.json.body);
    expect(Object.fromEntries(form)).toEqual({
      object_type: "payment",
      object_id: latest.id,
      event: "payment.changed",
      payment_status: "pending",
      test: "true",
    });
    await waitFor(
      () => receivedAt(box),
      (received) => received.length === 1,
    );
  });

  it("refuses a paused subscription (409) and another account's (404)", async () => {
    const { client } = await makeTenant();
    const other = await makeTenant();
    const { subscription } = await subscribeToReceiver(client, { is_active: false });
    expect(await call("POST", `/v1/webhooks/${subscription.id}/test/`, { headers: client.headers })).toMatchObject({
      status: 409,
      json: { detail: "The subscription is paused (is_active is false): resume it first." },
    });
    expect((await call("POST", `/v1/webhooks/${subscription.id}/test/`, { headers: other.client.headers })).status).toBe(404);
  });
});

describe("POST /v1/webhooks/{id}/recover/", () => {
  it("sends exactly the failed deliveries of the window again, once, with the same id and body", async () => {
    const { client } = await makeTenant();
    const { subscription, box } = await subscribeToReceiver(client);
    for (let i = 0; i < 4; i++) await makePayment(client);
    const log = await waitFor(
      () => logOf(client, subscription.id),
      (rows) => rows.length === 4 && rows.every((row) => row.status === "succeeded"),
    );
    await waitFor(
      () => receivedAt(box),
      (received) => received.length === 4,
    );
    // Oldest first: the first three failed for good (say the receiver was down); the first is outside the window.
    const [outside, a, b, kept] = [...log].reverse();
    const at = (ms: number) => new Date(ms).toISOString();
    const base = Date.parse(kept!.created);
    const shard = await shardD1(client.accountId);
    await shard.batch(
      [
        [outside!.id, base - 10 * 86_400_000],
        [a!.id, base - 3 * 86_400_000],
        [b!.id, base - 86_400_000],
      ].map(([id, created]) =>
        shard.prepare("update webhook_deliveries set status = 'failed', next_attempt_at = null, created_at = ? where id = ?").bind(created, id),
      ),
    );
    const window = { since: at(base - 5 * 86_400_000) };
    const keyed = { ...client.headers, "Idempotency-Key": "recover-1" };
    const res = await call("POST", `/v1/webhooks/${subscription.id}/recover/`, { body: window, headers: keyed });
    expect(res).toMatchObject({ status: 202, json: { recovered: 2 } });
    // The same request with its key replays the stored count (kept by the recovery's own batch)...
    const replayed = await call("POST", `/v1/webhooks/${subscription.id}/recover/`, { body: window, headers: keyed });
    expect([replayed.status, replayed.json, replayed.headers.get("Idempotent-Replayed")]).toEqual([202, { recovered: 2 }, "true"]);
    // ...and a new request finds nothing left to recover.
    const again = await call("POST", `/v1/webhooks/${subscription.id}/recover/`, { body: window, headers: client.headers });
    expect(again.json).toEqual({ recovered: 0 });

    const received = await waitFor(
      () => receivedAt(box),
      (got) => got.length === 6,
    );
    const resent = received
      .slice(4)
      .map((got) => got.headers["webhook-id"])
      .sort();
    expect(resent).toEqual([a!.id, b!.id].sort());
    const first = received.slice(0, 4).find((got) => got.headers["webhook-id"] === a!.id)!;
    expect(received.find((got, i) => i >= 4 && got.headers["webhook-id"] === a!.id)!.body).toBe(first.body);
    await waitFor(
      () => deliveryOf(client, subscription.id, b!.id),
      (r) => r.json.status === "succeeded",
    );
    expect((await deliveryOf(client, subscription.id, outside!.id)).json.status).toBe("failed");
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await receivedAt(box)).toHaveLength(6);
  });

  it.each([
    [{}, "since"],
    [{ since: "yesterday" }, "since"],
    [{ since: "2026-11-01T00:00:00Z", until: "2026-11-15T00:00:01Z" }, "since"],
    [{ since: "2026-11-10T00:00:00Z", until: "2026-11-09T00:00:00Z" }, "until"],
  ])("refuses %j with 400 naming %s", async (body, field) => {
    const { client } = await makeTenant();
    const { subscription } = await subscribeToReceiver(client);
    const res = await call("POST", `/v1/webhooks/${subscription.id}/recover/`, { body, headers: client.headers });
    expect(res.status).toBe(400);
    expect(Object.keys(res.json)).toEqual([field]);
  });

  it("takes a window of exactly 14 days, and refuses a paused subscription", async () => {
    const { client } = await makeTenant();
    const { subscription } = await subscribeToReceiver(client);
    const fourteen = await call("POST", `/v1/webhooks/${subscription.id}/recover/`, {
      body: { since: "2026-11-01T00:00:00Z", until: "2026-11-15T00:00:00Z" },
      headers: client.headers,
    });
    expect(fourteen).toMatchObject({ status: 202, json: { recovered: 0 } });
    await call("PATCH", `/v1/webhooks/${subscription.id}/`, { body: { is_active: false }, headers: client.headers });
    const dayAgo = new Date(Date.now() - 86_400_000).toISOString();
    expect(await call("POST", `/v1/webhooks/${subscription.id}/recover/`, { body: { since: dayAgo }, headers: client.headers })).toMatchObject({
      status: 409,
      json: { detail: "The subscription is paused (is_active is false): resume it first." },
    });
  });
});

describe("GET /v1/webhooks/{id}/stats/", () => {
  it("counts attempts as they are recorded: by outcome, with the success rate, percentiles and last times", async () => {
    const { client } = await makeTenant();
    const { subscription } = await subscribeToReceiver(client, {}, [500, 200, 200]);
    const empty = await call("GET", `/v1/webhooks/${subscription.id}/stats/`, { headers: client.headers });
    expect(empty).toMatchObject({
      status: 200,
      json: {
        window: "24h",
        attempts: 0,
        succeeded: 0,
        failed: 0,
        pending: 0,
        success_rate: null,
        p50_duration_ms: null,
        p95_duration_ms: null,
        last_attempt_at: null,
        last_success_at: null,
        failing_since: null,
        is_active: true,
      },
    });
    await makePayment(client);
    await makePayment(client);
    // One delivery answered 500 then (after its 5 s retry) 200; the other 200.
    await waitFor(
      () => logOf(client, subscription.id),
      (rows) => rows.length === 2 && rows.every((row) => row.status === "succeeded"),
      30_000,
    );
    const stats = await call("GET", `/v1/webhooks/${subscription.id}/stats/?window=1h`, { headers: client.headers });
    expect(stats.json).toMatchObject({
      window: "1h",
      attempts: 3,
      succeeded: 2,
      failed: 0,
      pending: 1,
      success_rate: 0.6667,
      failing_since: null,
      is_active: true,
    });
    expect(stats.json.p50_duration_ms).toBeGreaterThanOrEqual(0);
    expect(stats.json.p95_duration_ms).toBeGreaterThanOrEqual(stats.json.p50_duration_ms);
    expect(Date.parse(stats.json.last_success_at)).toBeLessThanOrEqual(Date.parse(stats.json.last_attempt_at));
    const attempts = (await Promise.all((await logOf(client, subscription.id)).map((row) => deliveryOf(client, subscription.id, row.id)))).flatMap(
      (r) => r.json.attempts,
    );
    expect(stats.json.last_attempt_at).toBe(
      attempts
        .map((attempt: { started_at: string }) => attempt.started_at)
        .sort()
        .at(-1),
    );
  }, 40_000);

  it("reads one row per 5-minute bucket of the window, whatever the history: 10 days of full buckets", async () => {
    const { client } = await makeTenant();
    const { subscription } = await subscribeToReceiver(client);
    const bucket = 5 * 60_000;
    const now = Date.now();
    const newest = now - (now % bucket);
    const starts = Array.from({ length: 10 * 288 }, (_, i) => newest - i * bucket);
    for (let i = 0; i < starts.length; i += 500) {
      const shard = await shardD1(client.accountId);
      await shard.batch(
        starts
          .slice(i, i + 500)
          .map((start) =>
            shard
              .prepare("insert into webhook_stats (subscription_id, bucket_start, attempts, succeeded, failed, pending, h2) values (?, ?, 10, 9, 0, 1, 10)")
              .bind(subscription.id, start),
          ),
      );
    }
    for (const [window, buckets] of [
      ["1h", 12],
      ["24h", 288],
      ["7d", 2016],
    ] as const) {
      const res = await call("GET", `/v1/webhooks/${subscription.id}/stats/?window=${window}`, {
        headers: client.headers,
        bindings: { SERVER_TIMING: "true" },
      });
      // The window's buckets, plus the one its start falls in.
      expect(res.json.attempts / 10, window).toBeGreaterThanOrEqual(buckets);
      expect(res.json.attempts / 10, window).toBeLessThanOrEqual(buckets + 1);
      expect(res.json).toMatchObject({
        succeeded: (res.json.attempts / 10) * 9,
        pending: res.json.attempts / 10,
        success_rate: 0.9,
        p50_duration_ms: 38,
        p95_duration_ms: 49,
      });
      const rowsRead = Number(/d1-rows-read;desc="(\d+)"/.exec(res.headers.get("server-timing") ?? "")?.[1]);
      expect(rowsRead, window).toBeLessThanOrEqual(buckets + 1 + 8); // + the subscription and the caller's own rows
    }
  });

  it("answers 400 for an unknown window and 404 for another account's subscription", async () => {
    const { client } = await makeTenant();
    const other = await makeTenant();
    const { subscription } = await subscribeToReceiver(client);
    expect((await call("GET", `/v1/webhooks/${subscription.id}/stats/?window=30d`, { headers: client.headers })).status).toBe(400);
    expect((await call("GET", `/v1/webhooks/${subscription.id}/stats/`, { headers: other.client.headers })).status).toBe(404);
  });
});
