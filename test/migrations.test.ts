import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, makePayment, makeTenant } from "./helpers/api";

/** The statements of one migration, as the test pool read them from migrations/. */
function migration(name: string): string[] {
  const found = env.TEST_MIGRATIONS.find((m: { name: string }) => m.name.includes(name));
  if (!found) throw new Error(`no migration ${name}`);
  return found.queries;
}

describe("data migrations", () => {
  it("0010 copies each invoice onto the payment links made before the copies existed", async () => {
    const { client } = await makeTenant();
    const { payment, invoice } = await makePayment(client);
    // A link as it was before 0009: the copies at their defaults.
    await env.DB.prepare("update payment_invoices set invoice_number = '', amount_cents = 0, invoice_created_at = 0 where payment_id = ?").bind(payment.id).run();
    for (const query of migration("0010_backfill_payment_invoice_copies")) await env.DB.prepare(query).run();
    const detail = await call("GET", `/v2/payments/${payment.id}/`, { headers: client.headers });
    expect(detail.json.invoices).toEqual([{ id: invoice.id, invoice_number: invoice.invoice_number, amount_cents: invoice.amount_cents }]);
  });

  it("0012 stores each existing payment's detail as the API shows it, events, invoices and stamps included", async () => {
    const { client, processor } = await makeTenant();
    const { payment, buyer, supplier } = await makePayment(client);
    const second = await makePayment(client, { buyer, supplier });
    const post = (body: Record<string, unknown>) => call("POST", `/v2/payments/${payment.id}/events/`, { body, headers: processor.headers });
    expect((await post({ event_code: "PU05", description: "Wire sent, \"quoted\"\nnext line", instrument_number: "TR-1", status: "in-progress" })).status).toBe(201);
    expect((await post({ event_code: "PU20", description: "Settled", status: "settled" })).status).toBe(201);
    expect((await post({ event_code: "PU30", description: "Refunded", status: "refunded", refund_reason: "Paid twice" })).status).toBe(201);
    const detail = (id: string) => call("GET", `/v2/payments/${id}/`, { headers: client.headers }).then((res) => res.json);
    const before = [await detail(payment.id), await detail(second.payment.id)];
    expect(before[0].events).toHaveLength(4);

    // Rows as they were before 0011: no stored detail.
    await env.DB.prepare("update payments set detail = null where id in (?, ?)").bind(payment.id, second.payment.id).run();
    for (const query of migration("0012_backfill_payment_detail")) await env.DB.prepare(query).run();
    expect([await detail(payment.id), await detail(second.payment.id)]).toEqual(before);
    const listed = await call("GET", "/v2/payments/?ordering=created", { headers: client.headers });
    expect(listed.json.results).toEqual([before[1], before[0]].sort((a, b) => a.created.localeCompare(b.created) || a.id.localeCompare(b.id)));
  });
});

