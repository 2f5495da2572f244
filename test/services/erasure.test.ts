import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createDb } from "../../src/db/client";
import { continueErasures, ERASE_CHUNK } from "../../src/services/erasure";
import { applyRetention } from "../../src/webhooks/upkeep/retention";
import { boundShards } from "../../src/db/shards";
import { ADMIN, call, makeCounterparty, makePayment, makeTenant, shardD1 } from "../helpers/api";
import { tenantRows } from "../helpers/tenant-rows";
import { receivedAt, secondAttempt, subscribeToReceiver, waitFor } from "../helpers/webhooks";

/** How many rows of the account each table holds, in the directory and in every shard. */
async function rowsOf(accountId: string) {
  const counts: Record<string, number> = {};
  const add = (more: Record<string, number>) => Object.entries(more).forEach(([table, n]) => (counts[table] = (counts[table] ?? 0) + n));
  const inDirectory = async (sql: string) => (await env.DB.prepare(sql).bind(accountId).first<{ n: number }>())!.n;
  add({
    accounts: await inDirectory("select count(*) as n from accounts where id = ?"),
    api_users: await inDirectory("select count(*) as n from api_users where account_id = ?"),
  });
  for (const shard of boundShards(env).values()) add(await tenantRows(shard, accountId));
  return counts;
}

describe("erasing an account", () => {
  it("is gone at once for its users and the admin API, then the cron removes every row and archive object, and nothing of another account", async () => {
    const doomed = await makeTenant();
    const kept = await makeTenant();
    for (const tenant of [doomed, kept]) {
      const { subscription, box } = await subscribeToReceiver(tenant.client, { payment_status: true });
      const buyer = await makeCounterparty(tenant.client, "buyer");
      const supplier = await makeCounterparty(tenant.client, "supplier");
      const made = [];
      for (let i = 0; i < 3; i++) made.push((await makePayment(tenant.client, { buyer, supplier })).payment);
      // One payment fails: its invoice link stays, released by the payment's own id.
      const failed = await call("POST", `/v2/payments/${made[0].id}/events/`, {
        body: { event_code: "PU90", description: "Rejected", status: "failed" },
        headers: tenant.processor.headers,
      });
      expect(failed.status).toBe(201);
      await call("POST", "/v1/counterparties/", {
        headers: { ...tenant.client.headers, "idempotency-key": "k1" },
        body: { internal_id: "idem", type: "buyer", name: "Idem" },
      });
      await waitFor(
        () => receivedAt(box),
        (got) => got.length === 4,
      );
      await secondAttempt(tenant.client, subscription.id, box);
      await env.ARCHIVE!.put(`deliveries/${tenant.account.id}/s/2026-01-01.ndjson.gz`, "x");
    }
    const before = await rowsOf(doomed.account.id);
    for (const table of [
      "payments",
      "payment_events",
      "payment_invoices",
      "webhook_deliveries",
      "webhook_attempts",
      "idempotency_keys",
      "list_counts",
      "time_counts",
    ])
      expect(before[table], table).toBeGreaterThan(0);
    const keptBefore = await rowsOf(kept.account.id);

    const erased = await call("DELETE", `/admin/accounts/${doomed.account.id}/`, { headers: ADMIN });
    expect(erased).toMatchObject({ status: 202, json: { detail: "The account is being erased." } });
    expect((await call("GET", "/v2/payments/", { headers: doomed.client.headers })).status).toBe(401);
    expect((await call("POST", `/admin/accounts/${doomed.account.id}/api-users/`, { headers: ADMIN, body: { username: "late" } })).status).toBe(404);
    expect((await call("DELETE", `/admin/accounts/${doomed.account.id}/`, { headers: ADMIN })).status).toBe(404);
    const listed = (await call("GET", "/admin/accounts/?page_size=1000", { headers: ADMIN })).json.results.map((row: { id: string }) => row.id);
    expect(listed).not.toContain(doomed.account.id);
    expect(listed).toContain(kept.account.id);

    for (let run = 0; run < 10 && (await rowsOf(doomed.account.id)).accounts! > 0; run++) await continueErasures(createDb(env.DB), env);
    expect(Object.values(await rowsOf(doomed.account.id)).every((n) => n === 0)).toBe(true);
    expect((await env.ARCHIVE!.list({ prefix: `deliveries/${doomed.account.id}/` })).objects).toHaveLength(0);
    expect(await rowsOf(kept.account.id)).toEqual(keptBefore);
    expect((await env.ARCHIVE!.list({ prefix: `deliveries/${kept.account.id}/` })).objects).toHaveLength(1);
    expect((await call("GET", "/v2/payments/", { headers: kept.client.headers })).json.count).toBe(3);
  });

  it("removes a large account over several bounded runs, its delivery log before the payments its bodies are rebuilt from", async () => {
    const { account, client } = await makeTenant();
    const { box } = await subscribeToReceiver(client, { payment_status: true });
    const buyer = await makeCounterparty(client, "buyer");
    const supplier = await makeCounterparty(client, "supplier");
    await makePayment(client, { buyer, supplier });
    await waitFor(
      () => receivedAt(box),
      (got) => got.length === 1,
    );
    // More deliveries than one run removes, old enough for retention to archive meanwhile.
    const shard = await shardD1(account.id);
    await shard
      .prepare(
        `insert into webhook_deliveries (id, subscription_id, account_id, payment_id, event_id, payment_version, body, flags, content_type, status, attempts, next_attempt_at, created_at, updated_at, test)
       with recursive n(i) as (select 1 union all select i + 1 from n where i < ?1)
       select id || '-' || i, subscription_id, account_id, payment_id, event_id, payment_version, body, flags, content_type, status, attempts, null, created_at - 40 * 86400000, updated_at - 40 * 86400000, test
       from webhook_deliveries, n where account_id = ?2`,
      )
      .bind(ERASE_CHUNK + 50, account.id)
      .run();
    // More invoices than one run removes.
    await shard
      .prepare(
        `insert into invoices (id, account_id, invoice_number, buyer_id, supplier_id, amount_cents, currency, created_at, updated_at)
       with recursive n(i) as (select 1 union all select i + 1 from n where i < ?1)
       select 'inv_bulk_' || ?2 || '_' || i, ?2, 'BULK-' || i, ?3, ?4, 100, 'USD', i, i from n`,
      )
      .bind(ERASE_CHUNK * 2 + 10, account.id, buyer.id, supplier.id)
      .run();
    expect((await call("DELETE", `/admin/accounts/${account.id}/`, { headers: ADMIN })).status).toBe(202);
    let runs = 0;
    while ((await rowsOf(account.id)).accounts! > 0 && runs < 20) {
      await continueErasures(createDb(env.DB), env);
      // Retention between the steps still rebuilds every body it archives.
      await applyRetention(createDb(shard), env.ARCHIVE, 30, Date.now());
      runs += 1;
    }
    expect(runs).toBeGreaterThanOrEqual(3);
    expect(Object.values(await rowsOf(account.id)).every((n) => n === 0)).toBe(true);
  });
});
