import { createExecutionContext, createMessageBatch, env, waitOnExecutionContext } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import worker from "../../src/index";
import { D1_MAX_RESULT_BYTES } from "../../src/lib/platform-limits";
import { LEASE_BODY_BYTES } from "../../src/webhooks/delivery/lanes";
import type { DeliveryMessage } from "../../src/webhooks";
import { call, makeTenant, shardD1 } from "../helpers/api";
import { largestPayment } from "../helpers/largest-rows";
import { receivedAt, subscribeToReceiver } from "../helpers/webhooks";

afterEach(() => {
  vi.restoreAllMocks();
});

describe("a consumer batch of the largest bodies", () => {
  it(`leases bodies up to ${LEASE_BODY_BYTES / 1e6} MB an invocation and puts off the rest a moment: every change of the largest payment reaches a full-detail subscription once`, async () => {
    const { client, processor } = await makeTenant({ shard: "B" });
    const { subscription, box } = await subscribeToReceiver(client, { all_payment_details: true }, Array(150).fill(200));
    // Paused while the payment is made: its 100 changes wait, held, for the test to hand them over.
    expect((await call("PATCH", `/v1/webhooks/${subscription.id}/`, { body: { is_active: false }, headers: client.headers })).status).toBe(200);
    await largestPayment(client, processor);
    const queued: string[] = [];
    const queue = {
      send: async (body: DeliveryMessage) => void queued.push(body.delivery_id),
      sendBatch: async (messages: { body: DeliveryMessage }[]) => void queued.push(...messages.map((m) => m.body.delivery_id)),
    } as unknown as Queue<DeliveryMessage>;
    expect(
      (await call("PATCH", `/v1/webhooks/${subscription.id}/`, { body: { is_active: true }, headers: client.headers, bindings: { DELIVERIES: queue } })).status,
    ).toBe(200);
    expect(queued).toHaveLength(100);

    const warn = vi.spyOn(console, "warn");
    const leased: number[] = [];
    for (let round = 0; round < 40 && queued.length > 0; round++) {
      const ids = queued.splice(0, 100);
      const batch = createMessageBatch<DeliveryMessage>(
        "payments-deliveries",
        ids.map((id, i) => ({ id: `m-${round}-${i}`, timestamp: new Date(), attempts: 1, body: { delivery_id: id, shard: "B" } })),
      );
      const ctx = createExecutionContext();
      const before = (await receivedAt(box)).length;
      await worker.queue(batch, { ...env, DELIVERIES: queue }, ctx);
      await waitOnExecutionContext(ctx);
      leased.push((await receivedAt(box)).length - before);
    }
    // The first invocation took what fits, the others came back and went in later ones.
    expect(leased[0]).toBeGreaterThan(0);
    expect(leased[0]).toBeLessThan(100);
    const got = await receivedAt(box);
    expect(got).toHaveLength(100);
    expect(new Set(got.map((one) => one.headers["hook-delivery"])).size).toBe(100);
    expect(got.every((one) => one.verified?.hmac)).toBe(true);
    const shard = await shardD1(client.accountId);
    expect(
      await shard.prepare("select status, count(*) as n from webhook_deliveries where subscription_id = ? group by status").bind(subscription.id).all(),
    ).toMatchObject({ results: [{ status: "succeeded", n: 100 }] });
    // Each invocation's largest D1 result, as the development layer counted it.
    const figures = warn.mock.calls
      .map(([line]) => String(line))
      .filter((line) => line.includes('"invocation_limits"'))
      .map((line) => JSON.parse(line));
    expect(figures.length).toBe(leased.length);
    for (const f of figures) expect(f.largestResultBytes).toBeLessThanOrEqual(Math.min(D1_MAX_RESULT_BYTES, 2 * LEASE_BODY_BYTES));
  });
});
