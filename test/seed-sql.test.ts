import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, makePayment, makeTenant, shardD1 } from "./helpers/api";

describe("the seeds' SQL (tools/lib/payment-detail.sql)", () => {
  it("stores each payment's detail as the API shows it, events, invoices and stamps included", async () => {
    const { client, processor } = await makeTenant();
    const { payment, buyer, supplier } = await makePayment(client);
    const second = await makePayment(client, { buyer, supplier });
    const post = (body: Record<string, unknown>) => call("POST", `/v2/payments/${payment.id}/events/`, { body, headers: processor.headers });
    expect((await post({ event_code: "PU05", description: 'Wire sent, "quoted"\nnext line', instrument_number: "TR-1", status: "in-progress" })).status).toBe(
      201,
    );
    expect((await post({ event_code: "PU20", description: "Settled", status: "settled" })).status).toBe(201);
    expect((await post({ event_code: "PU30", description: "Refunded", status: "refunded", refund_reason: "Paid twice" })).status).toBe(201);
    const detail = (id: string) => call("GET", `/v2/payments/${id}/`, { headers: client.headers }).then((res) => res.json);
    const before = [await detail(payment.id), await detail(second.payment.id)];
    expect(before[0].events).toHaveLength(4);

    // Rows as a seed inserts them: no stored detail.
    const shard = await shardD1(client.accountId);
    await shard.prepare("update payments set detail = null where id in (?, ?)").bind(payment.id, second.payment.id).run();
    await shard.prepare(env.PAYMENT_DETAIL_SQL).run();
    expect([await detail(payment.id), await detail(second.payment.id)]).toEqual(before);
    const listed = await call("GET", "/v2/payments/?ordering=created", { headers: client.headers });
    expect(listed.json.results).toEqual([before[1], before[0]].sort((a, b) => a.created.localeCompare(b.created) || a.id.localeCompare(b.id)));
  });
});
