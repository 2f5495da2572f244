import { describe, expect, it } from "vitest";
import { call, makePayment, makeTenant } from "../helpers/api";
import { receivedAt, subscribeToReceiver, waitFor } from "../helpers/webhooks";

describe("deliveries end to end, through the queue to a real receiver on 127.0.0.1", () => {
  it("delivers one signed delivery per subscription per change: 2 subscriptions x 4 changes = 8", async () => {
    const { client, processor } = await makeTenant();
    const first = await subscribeToReceiver(client, { payment_status: true });
    const second = await subscribeToReceiver(client, { all_payment_details: true });
    const { payment } = await makePayment(client);
    for (const [status, code] of [[undefined, "PU05"], ["in-progress", "PU10"], ["settled", "PU20"]] as const) {
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
    // Give a stray duplicate the chance to show up before counting.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const all = (await Promise.all(boxes.map(receivedAt))).flat();
    expect(all).toHaveLength(8);
    expect(got.every((r) => r.verified?.basic && r.verified.hmac && r.verified.standard)).toBe(true);
    expect(new Set(all.map((r) => r.headers["hook-delivery"])).size).toBe(8);
    const statuses = (await receivedAt(first.box)).map((r) => JSON.parse(r.body).payment_status);
    expect(statuses.sort()).toEqual(["in-progress", "pending", "pending", "settled"].sort());
    for (const sub of [first, second]) {
      const log = await call("GET", `/v1/webhooks/${sub.subscription.id}/deliveries/`, { headers: client.headers });
      expect(log.json.count).toBe(4);
      expect(log.json.results.every((d: { status: string }) => d.status === "succeeded")).toBe(true);
    }
  }, 30_000);
});
