import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createDb } from "../../src/db/client";
import { applyRetention } from "../../src/webhooks";
import { wholeList, call, makeCounterparty, makeInvoice, makePayment, makeTenant } from "../helpers/api";
import { receivedAt, subscribeToReceiver, waitFor } from "../helpers/webhooks";

// Sequence and version (docs/interface.md, "Sequence and version"): on shard A, where retention is run by hand below.
const shard = env.SHARD_A!;
const DAY = 86_400_000;

type Row = { id: string; sequence: number | null; payment_version: number | null; payment_id: string; status: string; test: boolean; created: string };

async function log(user: { headers: Record<string, string> }, subscriptionId: string, expected: number): Promise<Row[]> {
  const res = await waitFor(
    () => wholeList(`/v1/webhooks/${subscriptionId}/deliveries/`, user.headers),
    (r) => r.json.count === expected && r.json.results.every((row: Row) => row.status === "succeeded"),
  );
  return res.json.results;
}

describe("a subscription's sequence and a payment's version", () => {
  it("numbers every delivery of a subscription 1, 2, 3, … in commit order without gaps, across concurrent writes to many payments, and each carries its payment's version", async () => {
    const { client, processor } = await makeTenant({ shard: "A" });
    const { subscription, box } = await subscribeToReceiver(client, { payment_status: true });
    const { subscription: other } = await subscribeToReceiver(client);
    const payments = (await Promise.all(Array.from({ length: 4 }, () => makePayment(client)))).map((made) => made.payment);
    // Writes to four payments at once, three events each.
    await Promise.all(
      payments.map(async (payment) => {
        for (const code of ["PU10", "PU15", "PU16"]) {
          const res = await call("POST", `/v2/payments/${payment.id}/events/`, { body: { event_code: code, description: code }, headers: processor.headers });
          expect(res.status).toBe(201);
        }
      }),
    );
    const total = payments.length * 4;
    for (const id of [subscription.id, other.id]) {
      const rows = (await log(client, id, total)).reverse(); // oldest first
      expect(rows.map((row) => row.sequence)).toEqual(Array.from({ length: total }, (_, i) => i + 1));
      // Commit order: `created` rises with the sequence.
      expect(rows.map((row) => row.created)).toEqual([...rows.map((row) => row.created)].sort());
      // Each payment's versions 1..4, in order.
      for (const payment of payments) expect(rows.filter((row) => row.payment_id === payment.id).map((row) => row.payment_version)).toEqual([1, 2, 3, 4]);
    }
    const detail = await call("GET", `/v2/payments/${payments[0]!.id}/`, { headers: client.headers });
    expect(detail.json.version).toBe(4);
    expect(detail.json.events).toHaveLength(4);
    // The headers carry them, as the log does.
    const received = await waitFor(
      () => receivedAt(box),
      (list) => list.length === total,
    );
    const byDelivery = new Map((await log(client, subscription.id, total)).map((row) => [row.id, row]));
    for (const got of received) {
      const row = byDelivery.get(got.headers["hook-delivery"]!)!;
      expect(got.headers["hook-sequence"]).toBe(String(row.sequence));
      expect(got.headers["hook-payment-version"]).toBe(String(row.payment_version));
      expect(got.verified).toEqual({ basic: true, hmac: true, standard: true, kit: true });
    }
  });

  it("gives a test delivery no sequence, and the next change the next number", async () => {
    const { client } = await makeTenant({ shard: "A" });
    const { subscription, box } = await subscribeToReceiver(client);
    await makePayment(client);
    const test = await call("POST", `/v1/webhooks/${subscription.id}/test/`, { headers: client.headers });
    expect(test.status).toBe(202);
    expect(test.json).toMatchObject({ test: true, sequence: null, payment_version: null });
    await makePayment(client);
    const rows = await log(client, subscription.id, 3);
    expect(rows.map((row) => [row.test, row.sequence])).toEqual([
      [false, 2],
      [true, null],
      [false, 1],
    ]);
    const sent = await waitFor(
      () => receivedAt(box),
      (list) => list.length === 3,
    );
    const testSent = sent.find((got) => got.headers["hook-delivery"] === test.json.id)!;
    expect(testSent.headers["hook-sequence"]).toBeUndefined();
    expect(testSent.headers["hook-payment-version"]).toBeUndefined();
  });

  it("goes on past deliveries that retention removed, even when it removed them all", async () => {
    const { client } = await makeTenant({ shard: "A" });
    const { subscription } = await subscribeToReceiver(client);
    const buyer = await makeCounterparty(client, "buyer");
    const supplier = await makeCounterparty(client, "supplier");
    for (let i = 0; i < 3; i++) await makePayment(client, { buyer, supplier });
    await log(client, subscription.id, 3);
    // Every delivery of the subscription ended long ago: retention removes them all.
    await shard
      .prepare("update webhook_deliveries set created_at = created_at - ?1, updated_at = updated_at - ?1 where subscription_id = ?2")
      .bind(40 * DAY, subscription.id)
      .run();
    for (let run = 0; run < 20; run++) {
      await applyRetention(createDb(shard), undefined, 30, Date.now());
      const left = await shard.prepare("select count(*) as n from webhook_deliveries where subscription_id = ?").bind(subscription.id).first<{ n: number }>();
      if (left!.n === 0) break;
    }
    expect((await call("GET", `/v1/webhooks/${subscription.id}/deliveries/`, { headers: client.headers })).json.count).toBe(0);
    const invoice = await makeInvoice(client, buyer.id, supplier.id);
    const made = await call("POST", "/v2/payments/", {
      body: { originating_counterparty_id: buyer.id, receiving_counterparty_id: supplier.id, invoice_ids: [invoice.id], payment_method: "ach" },
      headers: client.headers,
    });
    expect(made.status).toBe(201);
    const [row] = await log(client, subscription.id, 1);
    expect(row!.sequence).toBe(4);
  });
});
