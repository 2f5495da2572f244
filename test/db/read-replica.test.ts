import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { ADMIN, basic, call, unique } from "../helpers/api";
import { laggingReplica } from "../helpers/replica-d1";

/**
 * Contract 10.2 against a replica that lags as far as D1 allows (test/helpers/replica-d1.ts): every
 * API request runs in a "first-primary" session on each database it touches (the directory, then its
 * shard), so its credential check sees the directory's primary and its reads see at least what each
 * primary had when its session started. Everything here is written through the doubles, so the
 * replicas can replay it.
 */
function onReplica() {
  const directory = laggingReplica(env.DB, env.REPLICA_DB);
  const replica = laggingReplica(env.SHARD_A!, env.REPLICA_SHARD);
  const api = (method: string, path: string, headers: Record<string, string>, body?: unknown) =>
    call(method, path, { headers, body, bindings: { DB: directory.binding, SHARD_A: replica.binding } });
  const user = async (accountId: string, role: "client" | "processor") => {
    const username = unique(role);
    const made = await api("POST", `/admin/accounts/${accountId}/api-users/`, ADMIN, { username, role });
    return { username, password: made.json.password as string, headers: { authorization: basic(username, made.json.password) } };
  };
  const tenant = async () => {
    const account = (await api("POST", "/admin/accounts/", ADMIN, { name: unique("acct"), shard: "A" })).json;
    return { account, client: await user(account.id, "client"), processor: await user(account.id, "processor") };
  };
  return { directory, replica, api, tenant };
}

describe("API requests on a lagging read replica", () => {
  it("read their own writes, request after request, while the reads are served by the replica", async () => {
    const { replica, api, tenant } = onReplica();
    const { client } = await tenant();
    for (let i = 0; i < 3; i++) {
      const made = await api("POST", "/v1/counterparties/", client.headers, { internal_id: unique("c"), type: "buyer", name: `Buyer ${i}` });
      expect(made.status).toBe(201);
      const list = await api("GET", "/v1/counterparties/?page_size=100", client.headers);
      expect(list.json.count).toBe(i + 1);
      expect(list.json.results.map((row: { id: string }) => row.id)).toContain(made.json.id);
      expect((await api("GET", `/v1/counterparties/${made.json.id}/`, client.headers)).status).toBe(200);
    }
    // The double does lag: a session that may start on the replica misses those writes.
    replica.state.constraint = "first-unconstrained";
    expect((await api("GET", "/v1/counterparties/?page_size=100", client.headers)).json.count).toBeLessThan(3);
  });

  it("refuse a rotated password at once, though the replica still holds the old one", async () => {
    const { directory, api, tenant } = onReplica();
    const { account, client } = await tenant();
    expect((await api("GET", "/v1/invoices/", client.headers)).status).toBe(200);
    const rotated = (await api("POST", `/admin/accounts/${account.id}/api-users/${client.username}/rotate/`, ADMIN)).json;
    expect((await api("GET", "/v1/invoices/", client.headers)).status).toBe(401);
    expect((await api("GET", "/v1/invoices/", { authorization: basic(client.username, rotated.password) })).status).toBe(200);
    // Rotated again on the primary alone: the replica keeps the password before it, as a lagging one would.
    const again = (await call("POST", `/admin/accounts/${account.id}/api-users/${client.username}/rotate/`, { headers: ADMIN })).json;
    const stale = { authorization: basic(client.username, rotated.password) };
    expect((await api("GET", "/v1/invoices/", stale)).status).toBe(401);
    expect((await api("GET", "/v1/invoices/", { authorization: basic(client.username, again.password) })).status).toBe(200);
    // The double does lag: its replica, caught up with the first rotation only (the second was made
    // on the primary alone), would let the old password in to a session that may start on it.
    await directory.catchUpAll();
    directory.state.constraint = "first-unconstrained";
    expect((await api("GET", "/v1/invoices/", stale)).status).toBe(200);
  });

  it("poll with updated__gt and miss no change committed before each poll", async () => {
    const { replica, api, tenant } = onReplica();
    const { client, processor } = await tenant();
    const buyer = (await api("POST", "/v1/counterparties/", client.headers, { internal_id: unique("b"), type: "buyer", name: "Buyer" })).json;
    const supplier = (await api("POST", "/v1/counterparties/", client.headers, { internal_id: unique("s"), type: "supplier", name: "Supplier" })).json;
    const seen = new Map<string, string>();
    let cursor = "2000-01-01T00:00:00Z";
    const poll = async () => {
      for (;;) {
        const page = await api("GET", `/v2/payments/?ordering=updated&updated__gt=${encodeURIComponent(cursor)}&page_size=3`, client.headers);
        for (const row of page.json.results as { id: string; updated: string }[]) {
          seen.set(row.id, row.updated);
          cursor = row.updated;
        }
        if (!page.json.next) return;
      }
    };
    const made: string[] = [];
    for (let round = 0; round < 5; round++) {
      const invoice = await api("POST", "/v1/invoices/", client.headers, { invoice_number: unique("INV"), buyer_id: buyer.id, supplier_id: supplier.id, amount_cents: 100 });
      const payment = await api("POST", "/v2/payments/", client.headers, {
        originating_counterparty_id: buyer.id,
        receiving_counterparty_id: supplier.id,
        invoice_ids: [invoice.json.id],
        payment_method: "ach",
      });
      expect(payment.status).toBe(201);
      made.push(payment.json.id);
      const moved = made[(round * 2) % made.length]!;
      expect((await api("POST", `/v2/payments/${moved}/events/`, processor.headers, { event_code: "PU15", description: `round ${round}` })).status).toBe(201);
      await poll();
      // Everything committed so far has been seen, at its latest stamp (read from the primary).
      for (const id of made) {
        const now = (await call("GET", `/v2/payments/${id}/`, { headers: client.headers })).json.updated;
        expect([id, seen.get(id)]).toEqual([id, now]);
      }
    }
    expect(replica.state.replicaReads).toBeGreaterThan(0);
  });
});
