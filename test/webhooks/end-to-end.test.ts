import { createExecutionContext, createMessageBatch, env, getQueueResult, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker from "../../src/index";
import type { DeliveryMessage } from "../../src/webhooks";
import { call, makePayment, makeTenant, shardD1, shardOf } from "../helpers/api";
import { Webhook } from "standardwebhooks";
import { hookHmac } from "../../src/webhooks/wire/signing";
import { allEnded, mailbox, receivedAt, receiverUrl, subscribeToReceiver, waitFor } from "../helpers/webhooks";

describe("deliveries end to end, through the queue to a real receiver on 127.0.0.1", () => {
  it("delivers one signed delivery per subscription per change: 2 subscriptions x 4 changes = 8", async () => {
    const { client, processor } = await makeTenant();
    const first = await subscribeToReceiver(client, { payment_status: true });
    const second = await subscribeToReceiver(client, { all_payment_details: true });
    const { payment } = await makePayment(client);
    for (const [status, code] of [
      [undefined, "PU05"],
      ["in-progress", "PU10"],
      ["settled", "PU20"],
    ] as const) {
      const res = await call("POST", `/v2/payments/${payment.id}/events/`, {
        body: { event_code: code, description: code, ...(status ? { status } : {}) },
        headers: processor.headers,
      });
      expect(res.status).toBe(201);
    }
    const boxes = [first.box, second.box];
    const got = await waitFor(
      async () => (await Promise.all(boxes.map(receivedAt))).flat(),
      (all) => all.length >= 8,
    );
    // Counted once every delivery has ended: a succeeded one is never sent again.
    await allEnded(client, [first.subscription.id, second.subscription.id]);
    const all = (await Promise.all(boxes.map(receivedAt))).flat();
    expect(all).toHaveLength(8);
    expect(got.every((r) => r.verified?.basic && r.verified.hmac && r.verified.standard && r.verified.kit)).toBe(true);
    expect(new Set(all.map((r) => r.headers["hook-delivery"])).size).toBe(8);
    // Each delivery id is a UUID, the same in both signatures' headers.
    for (const r of all) {
      expect(r.headers["hook-delivery"]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(r.headers["webhook-id"]).toBe(r.headers["hook-delivery"]);
    }
    const statuses = (await receivedAt(first.box)).map((r) => JSON.parse(r.body).payment_status);
    expect(statuses.sort()).toEqual(["in-progress", "pending", "pending", "settled"].sort());
    for (const sub of [first, second]) {
      const log = await call("GET", `/v1/webhooks/${sub.subscription.id}/deliveries/`, { headers: client.headers });
      expect(log.json.count).toBe(4);
      expect(log.json.results.every((d: { status: string }) => d.status === "succeeded")).toBe(true);
    }
  });

  it("sends credentials outside Latin-1 as UTF-8 Basic (RFC 7617), and they verify", async () => {
    const { client } = await makeTenant();
    const credentials = { username: "hook-ü-用户", password: "pass-€-密码" };
    const res = await call("POST", "/v1/webhooks/", {
      body: { event: "payment.changed", url: `${receiverUrl()}/hooks/${crypto.randomUUID()}`, content_type: "application/json", ...credentials },
      headers: client.headers,
    });
    expect(res.status).toBe(201);
    const box = await mailbox({ secret: res.json.secret, ...credentials }, new URL(res.json.url).pathname);
    await makePayment(client);
    const [got] = await waitFor(
      () => receivedAt(box),
      (all) => all.length === 1,
    );
    expect(got!.verified?.basic).toBe(true);
    const sent = new TextDecoder().decode(Uint8Array.from(atob(got!.headers.authorization!.slice("Basic ".length)), (c) => c.charCodeAt(0)));
    expect(sent).toBe(`${credentials.username}:${credentials.password}`);
  });

  it("retries a receiver that answers 500 then 200: one succeeded delivery, two attempts, one hook-delivery id", async () => {
    const { client } = await makeTenant();
    const { subscription, box } = await subscribeToReceiver(client, { invoice_ids: true }, [500, 200]);
    await makePayment(client);
    const got = await waitFor(
      () => receivedAt(box),
      (all) => all.length === 2,
    );
    expect(got[0]!.headers["hook-delivery"]).toBe(got[1]!.headers["hook-delivery"]);
    expect(got[0]!.body).toBe(got[1]!.body);
    expect(got[1]!.received_at - got[0]!.received_at).toBeGreaterThanOrEqual(4_000);
    expect(got.every((r) => r.verified?.basic && r.verified.hmac && r.verified.standard && r.verified.kit)).toBe(true);
    const deliveryId = got[0]!.headers["hook-delivery"];
    const detail = await waitFor(
      () => call("GET", `/v1/webhooks/${subscription.id}/deliveries/${deliveryId}/`, { headers: client.headers }),
      (res) => res.json.status === "succeeded",
    );
    expect(detail.json).toMatchObject({ id: deliveryId, status: "succeeded", next_attempt_at: null, body: got[0]!.body });
    expect(detail.json.attempts.map((a: { number: number; response_status: number }) => [a.number, a.response_status])).toEqual([
      [1, 500],
      [2, 200],
    ]);
  });

  it("redelivers with the same delivery id and body", async () => {
    const { client } = await makeTenant();
    const { subscription, box } = await subscribeToReceiver(client, { payment_status: true });
    await makePayment(client);
    const [first] = await waitFor(
      () => receivedAt(box),
      (all) => all.length === 1,
    );
    const deliveryId = first!.headers["hook-delivery"];
    await waitFor(
      () => call("GET", `/v1/webhooks/${subscription.id}/deliveries/${deliveryId}/`, { headers: client.headers }),
      (r) => r.json.status === "succeeded",
    );
    const res = await call("POST", `/v1/webhooks/${subscription.id}/deliveries/${deliveryId}/redeliver/`, { headers: client.headers });
    expect(res.status).toBe(202);
    expect(res.json.id).toBe(deliveryId);
    const got = await waitFor(
      () => receivedAt(box),
      (all) => all.length === 2,
    );
    expect(got[1]!.headers["hook-delivery"]).toBe(deliveryId);
    expect(got[1]!.body).toBe(first!.body);
    const detail = await waitFor(
      () => call("GET", `/v1/webhooks/${subscription.id}/deliveries/${deliveryId}/`, { headers: client.headers }),
      (r) => r.json.attempts.length === 2,
    );
    expect(detail.json.status).toBe("succeeded");
  });

  it("sends form bodies with every expansion", async () => {
    const { client, processor } = await makeTenant();
    const { box } = await subscribeToReceiver(client, {
      content_type: "application/x-www-form-urlencoded",
      invoice_ids: true,
      payment_status: true,
      payment_events: true,
      refund_reason: true,
      instrument_number: true,
    });
    // A JSON subscriber beside it: one change's deliveries of both content types, each with the stamp written its way.
    const { box: jsonBox } = await subscribeToReceiver(client, { payment_events: true });
    const { payment, invoice } = await makePayment(client);
    const event = await call("POST", `/v2/payments/${payment.id}/events/`, {
      body: { event_code: "PU05", description: "printed", instrument_number: "100234" },
      headers: processor.headers,
    });
    const got = await waitFor(
      () => receivedAt(box),
      (all) => all.length === 2,
    );
    const jsonGot = await waitFor(
      () => receivedAt(jsonBox),
      (all) => all.length === 2,
    );
    const bodies = got.map((r) => new URLSearchParams(r.body));
    const later = bodies.find((form) => form.get("instrument_number") === "100234")!;
    expect(got[0]!.headers["content-type"]).toBe("application/x-www-form-urlencoded");
    expect(later.get("object_id")).toBe(payment.id);
    expect(later.getAll("invoice_ids")).toEqual([invoice.id]);
    expect(later.get("payment_status")).toBe("pending");
    expect(later.get("refund_reason")).toBe("");
    expect(JSON.parse(later.get("payment_events")!).map((e: { event_code: string }) => e.event_code)).toEqual(["PU00", "PU05"]);
    expect(got.every((r) => r.verified?.standard && r.verified.hmac)).toBe(true);
    // The event's stamp, as the API answered it, in both bodies.
    expect(JSON.parse(later.get("payment_events")!)[1].created).toBe(event.json.created);
    const jsonLater = jsonGot.map((r) => JSON.parse(r.body)).find((body) => body.payment_events.length === 2)!;
    expect(jsonLater.payment_events[1]).toEqual(event.json);
  });

  it("freezes a body that reads as the payment detail does, for any text JSON can carry (a lone surrogate, emoji, quotes)", async () => {
    const { client, processor } = await makeTenant();
    const { subscription } = await subscribeToReceiver(client, { all_payment_details: true });
    const { payment } = await makePayment(client);
    // Built at run time: the test's own source must stay well-formed UTF-8 for the test pool.
    const description = `lone ${String.fromCharCode(0xd800)} high, ${String.fromCharCode(0xdc00)} low, 😀 "quoted" \\ ü\n`;
    const event = await call("POST", `/v2/payments/${payment.id}/events/`, { body: { event_code: "PU05", description }, headers: processor.headers });
    expect(event.status).toBe(201);
    const detail = (await call("GET", `/v2/payments/${payment.id}/`, { headers: client.headers })).json;
    const log = (await call("GET", `/v1/webhooks/${subscription.id}/deliveries/`, { headers: client.headers })).json;
    // Compared as JSON text, which escapes a lone surrogate (the test pool cannot carry one raw).
    expect(JSON.stringify(JSON.parse(log.results[0].body).object)).toBe(JSON.stringify(detail));
    expect(JSON.stringify(detail.events[1])).toBe(JSON.stringify(event.json));
    expect(JSON.stringify(event.json.description)).toBe(JSON.stringify(description.trim())); // trimmed, as Django REST framework does
  });

  it("signs with the old and the new secret for a day after a rotation", async () => {
    const { client } = await makeTenant();
    const { subscription, box } = await subscribeToReceiver(client, { payment_status: true });
    const rotated = await call("POST", `/v1/webhooks/${subscription.id}/rotate-secret/`, { headers: client.headers });
    await makePayment(client);
    const [got] = await waitFor(
      () => receivedAt(box),
      (all) => all.length === 1,
    );
    const headers = {
      "webhook-id": got!.headers["webhook-id"]!,
      "webhook-timestamp": got!.headers["webhook-timestamp"]!,
      "webhook-signature": got!.headers["webhook-signature"]!,
    };
    expect(headers["webhook-signature"].split(" ")).toHaveLength(2);
    expect(() => new Webhook(subscription.secret).verify(got!.body, headers)).not.toThrow();
    expect(() => new Webhook(rotated.json.secret).verify(got!.body, headers)).not.toThrow();
    // The receiver still holds the old secret and checks hook-hmac: it keeps working.
    expect(got!.verified).toEqual({ basic: true, hmac: true, standard: true, kit: true });
    expect(got!.headers["hook-hmac"]).toBe(await hookHmac(subscription.secret, got!.body));
    expect(got!.headers["hook-hmac-next"]).toBe(await hookHmac(rotated.json.secret, got!.body));
  });

  it("retries with the bytes stored at the change, after the payment and the subscription's flags have changed", async () => {
    const { client, processor } = await makeTenant();
    const { subscription, box } = await subscribeToReceiver(client, { all_payment_details: true }, [500, 200, 200]);
    const { payment } = await makePayment(client);
    await waitFor(
      () => receivedAt(box),
      (all) => all.length === 1,
    );
    // Between the failed attempt and its retry: the subscription asks for other fields, as a form, and the payment moves on.
    const patched = await call("PATCH", `/v1/webhooks/${subscription.id}/`, {
      body: { all_payment_details: false, payment_status: true, content_type: "application/x-www-form-urlencoded" },
      headers: client.headers,
    });
    expect(patched.status).toBe(200);
    await call("POST", `/v2/payments/${payment.id}/events/`, {
      body: { event_code: "PU10", description: "go", status: "in-progress" },
      headers: processor.headers,
    });
    const got = await waitFor(
      () => receivedAt(box),
      (all) => all.length === 3,
    );
    const firstDelivery = got.filter((r) => r.headers["hook-delivery"] === got[0]!.headers["hook-delivery"]);
    expect(firstDelivery).toHaveLength(2);
    expect(firstDelivery[1]!.body).toBe(firstDelivery[0]!.body);
    expect(firstDelivery[1]!.headers["content-type"]).toBe("application/json");
    expect(JSON.parse(firstDelivery[1]!.body).object).toMatchObject({ status: "pending", events: [expect.objectContaining({ event_code: "PU00" })] });
    // The change made after the PATCH is built with the new flags.
    const later = got.find((r) => r.headers["hook-delivery"] !== got[0]!.headers["hook-delivery"])!;
    expect(later.headers["content-type"]).toBe("application/x-www-form-urlencoded");
    expect(Object.fromEntries(new URLSearchParams(later.body))).toEqual({
      object_type: "payment",
      object_id: payment.id,
      event: "payment.changed",
      payment_status: "in-progress",
    });
  });

  it("drops pending deliveries when the subscription is deleted, and holds an inactive subscription's", async () => {
    const { client } = await makeTenant();
    const failing = await subscribeToReceiver(client, {}, Array(10).fill(500));
    const paused = await subscribeToReceiver(client, { is_active: false });
    await makePayment(client);
    await waitFor(
      () => receivedAt(failing.box),
      (all) => all.length >= 1,
    );
    const db = await shardD1(client.accountId);
    const count = (id: string) => db.prepare("select count(*) as n from webhook_deliveries where subscription_id = ?").bind(id).first<{ n: number }>();
    expect((await count(failing.subscription.id))!.n).toBe(1);
    expect((await count(paused.subscription.id))!.n).toBe(1);
    expect(
      (await call("GET", `/v1/webhooks/${paused.subscription.id}/deliveries/`, { headers: client.headers })).json.results.map(
        (row: { status: string }) => row.status,
      ),
    ).toEqual(["held"]);
    expect(await receivedAt(paused.box)).toEqual([]);
    const dropped = await db.prepare("select id from webhook_deliveries where subscription_id = ?").bind(failing.subscription.id).first<{ id: string }>();
    expect((await call("DELETE", `/v1/webhooks/${failing.subscription.id}/`, { headers: client.headers })).status).toBe(204);
    expect((await count(failing.subscription.id))!.n).toBe(0);
    // Its retry's queue message, when it comes, finds no delivery: nothing is sent, the message is acked.
    const batch = createMessageBatch<DeliveryMessage>("payments-deliveries", [
      { id: "retry", timestamp: new Date(), attempts: 1, body: { delivery_id: dropped!.id, shard: await shardOf(client.accountId) } },
    ]);
    const ctx = createExecutionContext();
    await worker.queue(batch, env, ctx);
    await waitOnExecutionContext(ctx);
    expect((await getQueueResult(batch, ctx)).explicitAcks).toEqual(["retry"]);
    expect(await receivedAt(failing.box)).toHaveLength(1);
  });
});
