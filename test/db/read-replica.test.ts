import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { issueBookmark } from "../../src/lib/bookmark";
import { ADMIN, basic, call, unique } from "../helpers/api";
import { laggingReplica } from "../helpers/replica-d1";
import { migrateReplicas } from "../helpers/replicas";

await migrateReplicas();

/**
 * docs/interface.md 10.2 against a replica that lags as far as D1 allows (test/helpers/replica-d1.ts):
 * the credential check runs on the directory's primary; a GET's shard work may be served by a
 * replica, as new as the `Payments-Bookmark` the client sent back asks, or as stale as the replica
 * is when it sent none; a write starts at the primary. Everything here is written through the
 * doubles, so the replicas can replay it.
 */
const BOOKMARK = "payments-bookmark";

function onReplica() {
  const directory = laggingReplica(env.DB, env.REPLICA_DB);
  const replica = laggingReplica(env.SHARD_A!, env.REPLICA_SHARD);
  const api = (method: string, path: string, headers: Record<string, string>, body?: unknown, bindings: Partial<typeof env> = {}) =>
    call(method, path, { headers, body, bindings: { DB: directory.binding, SHARD_A: replica.binding, ...bindings } });
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

const counterparty = (name: string) => ({ internal_id: unique("c"), type: "buyer", name });

describe("API requests on a lagging read replica", () => {
  it("read their own writes when they send back each answer's bookmark, while the replica serves the reads", async () => {
    const { replica, api, tenant } = onReplica();
    const { client } = await tenant();
    let bookmark = "";
    for (let i = 0; i < 3; i++) {
      const made = await api("POST", "/v1/counterparties/", client.headers, counterparty(`Buyer ${i}`));
      expect(made.status).toBe(201);
      bookmark = made.headers.get(BOOKMARK)!;
      const list = await api("GET", "/v1/counterparties/?page_size=100", { ...client.headers, [BOOKMARK]: bookmark });
      expect(list.json.count).toBe(i + 1);
      expect(list.json.results.map((row: { id: string }) => row.id)).toContain(made.json.id);
      bookmark = list.headers.get(BOOKMARK)!;
      expect((await api("GET", `/v1/counterparties/${made.json.id}/`, { ...client.headers, [BOOKMARK]: bookmark })).status).toBe(200);
    }
    expect(replica.state.replicaReads).toBeGreaterThanOrEqual(6);
    // A client that sends nothing may read the replica as it is: here, without the fourth.
    const fourth = await api("POST", "/v1/counterparties/", client.headers, counterparty("Buyer 3"));
    expect((await api("GET", "/v1/counterparties/?page_size=100", client.headers)).json.count).toBe(3);
    expect((await api("GET", "/v1/counterparties/?page_size=100", { ...client.headers, [BOOKMARK]: fourth.headers.get(BOOKMARK)! })).json.count).toBe(4);
  });

  it("read the feed at the primary, which the feed's route asks for itself: every delivery made so far, though the replica has none", async () => {
    const { api, tenant } = onReplica();
    const { client } = await tenant();
    const made = await api("POST", "/v1/webhooks/", client.headers, {
      event: "payment.changed",
      url: "http://127.0.0.1:9/hooks",
      content_type: "application/json",
      username: "hook",
      password: "hook-pass",
    });
    expect((await api("PATCH", `/v1/webhooks/${made.json.id}/`, client.headers, { is_active: false })).status).toBe(200);
    const buyer = (await api("POST", "/v1/counterparties/", client.headers, counterparty("Buyer"))).json;
    const supplier = (await api("POST", "/v1/counterparties/", client.headers, { ...counterparty("Supplier"), type: "supplier" })).json;
    const invoice = (
      await api("POST", "/v1/invoices/", client.headers, { invoice_number: unique("INV"), buyer_id: buyer.id, supplier_id: supplier.id, amount_cents: 100 })
    ).json;
    const paid = await api("POST", "/v2/payments/", client.headers, {
      originating_counterparty_id: buyer.id,
      receiving_counterparty_id: supplier.id,
      invoice_ids: [invoice.id],
      payment_method: "ach",
    });
    expect(paid.status).toBe(201);
    // The delivery log, read with no bookmark, may come from the replica: it has not even the subscription yet.
    expect((await api("GET", `/v1/webhooks/${made.json.id}/deliveries/`, client.headers)).status).toBe(404);
    const feed = await api("GET", `/v1/webhooks/${made.json.id}/feed/`, client.headers);
    expect(feed.json.results.map((row: { payment_id: string }) => row.payment_id)).toEqual([paid.json.id]);
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

  it("poll with updated__gt and no bookmark, from a replica behind the primary, and skip no change", async () => {
    const { replica, api, tenant } = onReplica();
    const { client, processor } = await tenant();
    const buyer = (await api("POST", "/v1/counterparties/", client.headers, { internal_id: unique("b"), type: "buyer", name: "Buyer" })).json;
    const supplier = (await api("POST", "/v1/counterparties/", client.headers, { internal_id: unique("s"), type: "supplier", name: "Supplier" })).json;
    const seen = new Map<string, string>();
    let cursor = "2000-01-01T00:00:00Z";
    let pollsBehind = 0;
    const poll = async () => {
      if (replica.state.applied < replica.log.length) pollsBehind += 1;
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
    for (let round = 0; round < 6; round++) {
      const invoice = await api("POST", "/v1/invoices/", client.headers, {
        invoice_number: unique("INV"),
        buyer_id: buyer.id,
        supplier_id: supplier.id,
        amount_cents: 100,
      });
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
      // The replica has caught up to some prefix of the primary's commits, as D1's replicas do.
      await replica.catchUpTo(replica.log.length - (round % 3) * 2);
      await poll();
    }
    expect(pollsBehind).toBeGreaterThan(0);
    // Once the replica has everything, the poll from where it stood has every change at its latest stamp.
    await replica.catchUpAll();
    await poll();
    for (const id of made) {
      const now = (await call("GET", `/v2/payments/${id}/`, { headers: client.headers })).json.updated;
      expect([id, seen.get(id)]).toEqual([id, now]);
    }
  });
});

describe("Payments-Bookmark sent back", () => {
  it("is refused with a 400 when malformed, another account's, or altered to a point it never gave, before any read", async () => {
    const { replica, api, tenant } = onReplica();
    const mine = await tenant();
    const theirs = await tenant();
    const given = (await api("POST", "/v1/counterparties/", mine.client.headers, counterparty("Mine"))).headers.get(BOOKMARK)!;
    const foreign = (await api("POST", "/v1/counterparties/", theirs.client.headers, counterparty("Theirs"))).headers.get(BOOKMARK)!;
    const [, shard, d1, keyId, tag] = given.split(".");
    const malformed = { detail: "Payments-Bookmark is malformed: send back the header of an earlier answer as it came." };
    const notGiven = { detail: "Payments-Bookmark was not given to this account: send back the header of one of its own answers." };
    const cases: [string, string, unknown][] = [
      ["nonsense", "nonsense", malformed],
      ["empty", "", malformed],
      ["a D1 bookmark alone", "00000000-00000016-00000000-00000000000000000000000000000000", malformed],
      ["a short tag", `b1.${shard}.${d1}.${keyId}.${tag!.slice(1)}`, malformed],
      ["no key id", `b1.${shard}.${d1}.${tag}`, malformed],
      ["another account's", foreign, notGiven],
      ["a future point", `b1.${shard}.${Number(d1) + 1000}.${keyId}.${tag}`, notGiven],
      ["another shard's name on it", `b1.B.${d1}.${keyId}.${tag}`, notGiven],
    ];
    const readsBefore = replica.state.replicaReads + replica.state.primaryReads;
    for (const [name, header, detail] of cases) {
      for (const [method, path, body] of [
        ["GET", "/v1/counterparties/"],
        ["POST", "/v1/counterparties/", counterparty("Refused")],
      ] as const) {
        const res = await api(method, path, { ...mine.client.headers, [BOOKMARK]: header }, body);
        expect([name, method, res.status, res.json]).toEqual([name, method, 400, detail]);
      }
    }
    expect(replica.state.replicaReads + replica.state.primaryReads).toBe(readsBefore);
    expect((await api("GET", "/v1/counterparties/", { ...mine.client.headers, [BOOKMARK]: given })).json.count).toBe(1);
  });

  it("of the shard the account left reads the primary of the one it is on", async () => {
    const { api, tenant } = onReplica();
    const { account, client } = await tenant();
    await api("POST", "/v1/counterparties/", client.headers, counterparty("Before"));
    // Given before a move, when the account was on B: it says nothing about A, so A's primary answers.
    const fromB = await issueBookmark(env.ENCRYPTION_KEY!, account.id, { shard: "B", d1: "7" });
    const list = await api("GET", "/v1/counterparties/", { ...client.headers, [BOOKMARK]: fromB });
    expect(list.status).toBe(200);
    expect(list.json.count).toBe(1);
    expect(list.headers.get(BOOKMARK)).toMatch(/^b1\.A\.\d+\.[0-9a-f]{8}\.[A-Za-z0-9_-]{22}$/);
  });

  it("signed with a key the rotation dropped, is read from the primary and answered with one of today's key", async () => {
    const { api, tenant } = onReplica();
    const { client } = await tenant();
    const old = (await api("POST", "/v1/counterparties/", client.headers, counterparty("Old key"))).headers.get(BOOKMARK)!;
    const rotated = { ENCRYPTION_KEY: btoa(String.fromCharCode(...new Uint8Array(32).fill(9))) };
    const list = await api("GET", "/v1/counterparties/", { ...client.headers, [BOOKMARK]: old }, undefined, rotated);
    expect([list.status, list.json.count]).toEqual([200, 1]);
    const fresh = list.headers.get(BOOKMARK)!;
    expect(fresh.split(".")[3]).not.toBe(old.split(".")[3]);
    expect((await api("GET", "/v1/counterparties/", { ...client.headers, [BOOKMARK]: fresh }, undefined, rotated)).status).toBe(200);
  });

  it("is neither given nor checked without ENCRYPTION_KEY: every read then starts at the primary", async () => {
    const { api, tenant } = onReplica();
    const { client } = await tenant();
    const given = (await api("POST", "/v1/counterparties/", client.headers, counterparty("Keyed"))).headers.get(BOOKMARK)!;
    const keyless = { ENCRYPTION_KEY: undefined };
    const made = await api("POST", "/v1/counterparties/", client.headers, counterparty("Keyless"), keyless);
    expect(made.status).toBe(201);
    expect(made.headers.get(BOOKMARK)).toBeNull();
    const list = await api("GET", "/v1/counterparties/", { ...client.headers, [BOOKMARK]: given }, undefined, keyless);
    expect([list.status, list.json.count]).toEqual([200, 2]);
    expect((await api("GET", "/v1/counterparties/", { ...client.headers, [BOOKMARK]: "nonsense" }, undefined, keyless)).status).toBe(400);
  });

  it("comes back unchanged from a request that read nothing from the shard", async () => {
    const { api, tenant } = onReplica();
    const { client } = await tenant();
    const given = (await api("POST", "/v1/counterparties/", client.headers, counterparty("One"))).headers.get(BOOKMARK)!;
    const invalid = await api("GET", "/v1/counterparties/?type=nonsense", { ...client.headers, [BOOKMARK]: given });
    expect(invalid.status).toBe(400);
    expect(invalid.headers.get(BOOKMARK)).toBe(given);
  });
});
