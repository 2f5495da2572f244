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
});
