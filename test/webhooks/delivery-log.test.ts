import { describe, expect, it } from "vitest";
import { call, makePayment, makeTenant, shardD1 } from "../helpers/api";
import { receivedAt, subscribeToReceiver, waitFor } from "../helpers/webhooks";

type Row = { id: string; payment_id: string; payment_version: number; status: string; test: boolean };

describe("GET /v1/webhooks/{id}/deliveries/ filtered", () => {
  it("by payment_id: the deliveries of that payment's changes, newest first, and no other payment's or test delivery", async () => {
    const { client, processor } = await makeTenant();
    const { subscription, box } = await subscribeToReceiver(client);
    const { payment, buyer, supplier } = await makePayment(client);
    const { payment: other } = await makePayment(client, { buyer, supplier });
    for (const [code, status] of [
      ["PU10", "in-progress"],
      ["PU15", undefined],
    ] as const) {
      const res = await call("POST", `/v2/payments/${payment.id}/events/`, {
        body: { event_code: code, description: code, status },
        headers: processor.headers,
      });
      expect(res.status).toBe(201);
    }
    // The test delivery is built from the latest payment; it is not one of its changes.
    expect((await call("POST", `/v1/webhooks/${subscription.id}/test/`, { headers: client.headers })).status).toBe(202);
    await waitFor(
      () => receivedAt(box),
      (received) => received.length === 5,
    );

    const byPayment = async (id: string, extra = "") =>
      (await call("GET", `/v1/webhooks/${subscription.id}/deliveries/?payment_id=${id}${extra}`, { headers: client.headers })).json as {
        count: number;
        results: Row[];
      };
    const mine = await byPayment(payment.id);
    expect(mine.count).toBe(3);
    expect(mine.results.map((row) => [row.payment_id, row.payment_version, row.test])).toEqual([
      [payment.id, 3, false],
      [payment.id, 2, false],
      [payment.id, 1, false],
    ]);
    const theirs = await byPayment(other.id);
    expect(theirs.results.map((row) => [row.payment_id, row.payment_version, row.test])).toEqual([[other.id, 1, false]]);
    // With a status filter as well, and for a payment with no deliveries.
    expect((await byPayment(payment.id, "&status=succeeded")).count).toBe(3);
    expect((await byPayment(payment.id, "&status=failed")).results).toEqual([]);
    expect((await byPayment("pmt_none")).count).toBe(0);
  });

  it("names each delivery's event, found by its payment and version; a row from before that names its event shows the same", async () => {
    const { client, processor } = await makeTenant();
    const { subscription, box } = await subscribeToReceiver(client, { payment_events: true });
    const { payment } = await makePayment(client);
    expect(
      (
        await call("POST", `/v2/payments/${payment.id}/events/`, {
          body: { event_code: "PU10", description: "Sent", status: "in-progress" },
          headers: processor.headers,
        })
      ).status,
    ).toBe(201);
    await waitFor(
      () => receivedAt(box),
      (received) => received.length === 2,
    );
    const events = (await call("GET", `/v2/payments/${payment.id}/`, { headers: client.headers })).json.events as { id: string }[];
    const log = async () =>
      (await call("GET", `/v1/webhooks/${subscription.id}/deliveries/`, { headers: client.headers })).json.results as (Row & {
        event_id: string;
        body: string;
      })[];
    const before = await log();
    expect(before.map((row) => [row.payment_version, row.event_id])).toEqual([
      [2, events[1]!.id],
      [1, events[0]!.id],
    ]);
    // A row made before rows kept their version: its event named, its version null.
    const shard = await shardD1(client.accountId);
    await shard.prepare("update webhook_deliveries set payment_version = null, event_id = ?2 where id = ?1").bind(before[1]!.id, events[0]!.id).run();
    const after = await log();
    expect(after[1]).toMatchObject({ event_id: events[0]!.id, body: before[1]!.body, payment_version: null });
    const one = (await call("GET", `/v1/webhooks/${subscription.id}/deliveries/${before[1]!.id}/`, { headers: client.headers })).json;
    expect(one).toMatchObject({ event_id: events[0]!.id, body: before[1]!.body });
  });
});
