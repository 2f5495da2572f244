import { env } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createDb } from "../src/db/client";
import { continueMoves } from "../src/services/moves";
import { MOVED_TABLES, moveTriggers } from "../src/services/moves/tables";
import { sweepOutbox } from "../src/webhooks/upkeep/sweeper";
import { ADMIN, call, wholeList, makeCounterparty, makeInvoice, makeTenant, type User } from "./helpers/api";
import { tenantRows } from "./helpers/tenant-rows";
import { receivedAt, secondAttempt, subscribeToReceiver, waitFor } from "./helpers/webhooks";

afterEach(() => {
  vi.restoreAllMocks();
});

const directory = () => createDb(env.DB);
const move = (accountId: string, shard: unknown) => call("POST", `/admin/accounts/${accountId}/move/`, { body: { shard }, headers: ADMIN });
const accountOf = async (accountId: string) => (await call("GET", `/admin/accounts/${accountId}/`, { headers: ADMIN })).json;

/** Every row of the account on a shard, table by table, in key order: what a move must carry over unchanged. */
async function dump(d1: D1Database, accountId: string) {
  const out: Record<string, unknown[]> = {};
  for (const table of MOVED_TABLES) {
    const { results } = await d1
      .prepare(`select * from "${table.name}" where ${table.rows} order by ${table.key.map((k) => `"${k}"`).join(", ")}`)
      .bind(accountId)
      .all();
    out[table.name] = results;
  }
  return out;
}

/**
 * The columns the cut-over sets anew: the handover columns, so the new shard's sweeper sends its
 * pending deliveries, and the feed's epoch, so cursors of the old shard expire (its own test below).
 */
const withoutHandover = (rows: Record<string, unknown[]>) => ({
  ...rows,
  tenants: rows.tenants!.map((row) => ({ ...(row as object), epoch: null })),
  webhook_deliveries: rows.webhook_deliveries!.map((row) => ({ ...(row as object), enqueued_at: null, leased_until: null, lease_token: null })),
});

/** Writes through the API that retry a 503 of the cut-over after its Retry-After, as a client would; counts them. */
function retrying(user: User) {
  const refused = { count: 0 };
  const send = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    for (;;) {
      const res = await call(method, path, { body, headers: { ...user.headers, ...headers } });
      if (res.status !== 503) return res;
      expect(res.json).toEqual({ detail: "Account is moving; retry shortly." });
      expect(res.headers.get("Retry-After")).toBe("2");
      refused.count += 1;
      await new Promise((done) => setTimeout(done, 50));
    }
  };
  return { send, refused };
}

describe("moving an account to another shard", () => {
  it("keeps every change, stamp, delivery and idempotency key while the account keeps writing through it, and leaves nothing on the old shard", async () => {
    const { client, processor } = await makeTenant({ shard: "A" });
    const neighbour = await makeTenant({ shard: "A" });
    await makeCounterparty(neighbour.client, "buyer");
    const neighbourBefore = await tenantRows(env.SHARD_A!, neighbour.account.id);
    const { subscription, box } = await subscribeToReceiver(client, { payment_status: true, payment_events: true });
    const buyer = await makeCounterparty(client, "buyer");
    const supplier = await makeCounterparty(client, "supplier");
    const writer = retrying(client);
    const mover = retrying(processor);
    // What the API answered for each payment: its creation, then each event in order.
    const written = new Map<string, { created: Record<string, any>; events: Record<string, any>[] }>();
    let changes = 0;
    let first: { body: unknown; key: string; answer: unknown } | undefined;
    // Keys only before the move: a keyed write that meets the cut-over keeps its key locked until
    // its lock lapses, as after a crash (docs/operations.md).
    let keyed = true;
    const pay = async () => {
      const invoice = await writer.send("POST", "/v1/invoices/", {
        invoice_number: `INV-${crypto.randomUUID()}`,
        buyer_id: buyer.id,
        supplier_id: supplier.id,
        amount_cents: 1250,
      });
      expect(invoice.status).toBe(201);
      const body = { originating_counterparty_id: buyer.id, receiving_counterparty_id: supplier.id, invoice_ids: [invoice.json.id], payment_method: "ach" };
      const key = `pay-${invoice.json.id}`;
      const made = await writer.send("POST", "/v2/payments/", body, keyed ? { "Idempotency-Key": key } : {});
      expect(made.status).toBe(201);
      written.set(made.json.id, { created: made.json, events: [] });
      first ??= { body, key, answer: made.json };
      changes += 1;
    };
    const event = async (n: number) => {
      const ids = [...written.keys()];
      const id = ids[n % ids.length]!;
      const res = await mover.send("POST", `/v2/payments/${id}/events/`, { event_code: "PU15", description: `note ${n}` });
      expect(res.status).toBe(201);
      written.get(id)!.events.push(res.json);
      changes += 1;
    };
    // A failure lets go of the payment's invoice: its link is made again under the payment's id.
    const fail = async (id: string) => {
      const res = await mover.send("POST", `/v2/payments/${id}/events/`, { event_code: "PU90", description: "Rejected", status: "failed" });
      expect(res.status).toBe(201);
      written.get(id)!.events.push(res.json);
      changes += 1;
    };
    for (let i = 0; i < 5; i++) await pay();
    const before = [...written.keys()];
    keyed = false;
    await waitFor(
      () => receivedAt(box),
      (all) => all.length === 5,
    );
    await secondAttempt(client, subscription.id, box);

    const started = await move(client.accountId, "B");
    expect(started.status).toBe(202);
    expect(started.json).toMatchObject({ id: client.accountId, shard: "A", move: { to: "B", state: "copying", copied_rows: 0, started: expect.any(String) } });

    // Writes race the copy's bounded steps (a write that meets the cut-over answers 503 and is
    // retried, as a client would). After RACING steps, writes go on between the steps rather than
    // during them: a step's drain then finds none in flight, so the move ends however slowly this
    // machine runs its writes (racing, a loaded one can keep a write in flight at every drain).
    const RACING = 12;
    let steps = 0;
    for (; (await accountOf(client.accountId)).move !== null; steps++) {
      expect(steps).toBeLessThan(RACING + 200);
      // Every third step fails a payment made before the move: its link was copied before it let go.
      const early = steps % 3 === 1 ? before.shift() : undefined;
      const writes = () => Promise.all([pay().then(() => event(steps)), early && fail(early)]);
      if (steps < RACING) await Promise.all([writes(), continueMoves(directory(), env, { budgetMs: 5 })]);
      else {
        await writes();
        await continueMoves(directory(), env, { budgetMs: 5 });
      }
    }
    expect(steps).toBeGreaterThan(2);
    expect(await accountOf(client.accountId)).toMatchObject({ shard: "B", move: null });
    expect(Object.values(await tenantRows(env.SHARD_A!, client.accountId)).every((n) => n === 0)).toBe(true);
    const onB = await tenantRows(env.SHARD_B!, client.accountId);
    for (const table of ["payments", "payment_events", "webhook_deliveries", "webhook_attempts", "webhook_stats", "idempotency_keys", "time_counts"])
      expect(onB[table], table).toBeGreaterThan(0);
    expect(await tenantRows(env.SHARD_A!, neighbour.account.id)).toEqual(neighbourBefore);
    // One link per invoice on B, held by a live payment and let go by a failed one.
    const links = await env
      .SHARD_B!.prepare("select l.released_by, l.payment_id, p.status from payment_invoices l join payments p on p.id = l.payment_id where p.account_id = ?")
      .bind(client.accountId)
      .all<{ released_by: string; payment_id: string; status: string }>();
    expect(links.results).toHaveLength(written.size);
    expect(links.results.some((link) => link.status === "failed")).toBe(true);
    for (const link of links.results) expect(link.released_by).toBe(link.status === "failed" ? link.payment_id : "");

    // Every change is there as it was answered, stamps unchanged: each payment's detail is its
    // creation with its events added, `updated` the last event's stamp.
    const listed = await wholeList("/v2/payments/?ordering=updated", client.headers);
    expect(listed.json.count).toBe(written.size);
    for (const row of listed.json.results) {
      const { created, events } = written.get(row.id)!;
      expect(row).toEqual({
        ...created,
        events: [...created.events, ...events],
        version: created.version + events.length,
        status: events.at(-1)?.status ?? created.status,
        updated: events.at(-1)?.created ?? created.updated,
      });
    }
    const replay = await call("POST", "/v2/payments/", { body: first!.body, headers: { ...client.headers, "Idempotency-Key": first!.key } });
    expect([replay.status, replay.headers.get("Idempotent-Replayed")]).toEqual([201, "true"]);
    expect(replay.json).toEqual(first!.answer);

    // Every change is delivered once (one of them twice: the redelivery before the move): pending
    // ones from B, after its sweep hands them over.
    await sweepOutbox(createDb(env.SHARD_B!), { queue: env.DELIVERIES, shard: "B" });
    const got = await waitFor(
      () => receivedAt(box),
      (all) => all.length >= changes + 1,
      60_000,
    );
    const ids = got.map((delivery) => delivery.headers["webhook-id"]);
    expect(new Set(ids).size).toBe(changes);
    expect(ids.length).toBe(changes + 1);
  }, 180_000);

  it("carries every row over unchanged: at the cut-over both shards hold the same rows, to the byte", async () => {
    const { client, processor } = await makeTenant({ shard: "B" });
    await subscribeToReceiver(client, { all_payment_details: true });
    const buyer = await makeCounterparty(client, "buyer");
    const supplier = await makeCounterparty(client, "supplier");
    for (let i = 0; i < 3; i++) {
      const invoice = await makeInvoice(client, buyer.id, supplier.id);
      const made = await call("POST", "/v2/payments/", {
        body: { originating_counterparty_id: buyer.id, receiving_counterparty_id: supplier.id, invoice_ids: [invoice.id], payment_method: "wire" },
        headers: { ...client.headers, "Idempotency-Key": `k${i}` },
      });
      await call("POST", `/v2/payments/${made.json.id}/events/`, {
        body: { event_code: "PU10", description: "Sent", status: "in-progress", instrument_number: `W-${i}` },
        headers: processor.headers,
      });
    }
    expect((await move(client.accountId, "A")).status).toBe(202);
    for (let i = 0; (await accountOf(client.accountId)).move?.state !== "leaving"; i++) {
      expect(i).toBeLessThan(200);
      await continueMoves(directory(), env, { budgetMs: 5 });
    }
    // A refuses all but deletes now; B serves the account.
    expect(withoutHandover(await dump(env.SHARD_A!, client.accountId))).toEqual(withoutHandover(await dump(env.SHARD_B!, client.accountId)));
    for (let i = 0; i < 5 && (await accountOf(client.accountId)).move !== null; i++) await continueMoves(directory(), env);
    expect(await accountOf(client.accountId)).toMatchObject({ shard: "A", move: null });
    expect(Object.values(await tenantRows(env.SHARD_B!, client.accountId)).every((n) => n === 0)).toBe(true);
  });

  it("starts a new feed epoch: a cursor from before the move answers 410, and the sequence goes on", async () => {
    const { client } = await makeTenant({ shard: "A" });
    const { subscription } = await subscribeToReceiver(client);
    const buyer = await makeCounterparty(client, "buyer");
    const supplier = await makeCounterparty(client, "supplier");
    const pay = async () => {
      const invoice = await makeInvoice(client, buyer.id, supplier.id);
      const made = await call("POST", "/v2/payments/", {
        body: { originating_counterparty_id: buyer.id, receiving_counterparty_id: supplier.id, invoice_ids: [invoice.id], payment_method: "ach" },
        headers: client.headers,
      });
      expect(made.status).toBe(201);
    };
    await pay();
    const before = await call("GET", `/v1/webhooks/${subscription.id}/feed/`, { headers: client.headers });
    expect(before.json.results.map((item: { sequence: number }) => item.sequence)).toEqual([1]);
    expect((await move(client.accountId, "B")).status).toBe(202);
    for (let i = 0; (await accountOf(client.accountId)).move !== null; i++) {
      expect(i).toBeLessThan(200);
      await continueMoves(directory(), env, { budgetMs: 5 });
    }
    const stale = await call("GET", `/v1/webhooks/${subscription.id}/feed/?after=${before.json.next}`, { headers: client.headers });
    expect(stale.status).toBe(410);
    expect(stale.json).toEqual({ detail: "Cursor expired; resynchronise by polling /v2/payments/." });
    await pay();
    const after = await call("GET", `/v1/webhooks/${subscription.id}/feed/`, { headers: client.headers });
    expect(after.json.results.map((item: { sequence: number }) => item.sequence)).toEqual([1, 2]);
  });

  it("is stepped by one cron run at a time: runs that overlap leave it to the one holding its lease", async () => {
    const { client } = await makeTenant({ shard: "A" });
    for (let i = 0; i < 30; i++) await makeCounterparty(client, i % 2 ? "buyer" : "supplier");
    const before = await tenantRows(env.SHARD_A!, client.accountId);
    expect((await move(client.accountId, "B")).status).toBe(202);
    // A step held elsewhere (its lease not lapsed): this run leaves the move alone.
    await env.DB.prepare("update accounts set move_lease_until = ?2 where id = ?1")
      .bind(client.accountId, Date.now() + 60_000)
      .run();
    await continueMoves(directory(), env, { budgetMs: 5 });
    expect((await env.SHARD_A!.prepare("select count(*) as n from moves where account_id = ?1").bind(client.accountId).first<{ n: number }>())!.n).toBe(0);
    expect((await accountOf(client.accountId)).move).toMatchObject({ state: "copying", copied_rows: 0 });
    await env.DB.prepare("update accounts set move_lease_until = ?2 where id = ?1")
      .bind(client.accountId, Date.now() - 1)
      .run();
    for (let i = 0; (await accountOf(client.accountId)).move !== null; i++) {
      expect(i).toBeLessThan(200);
      await Promise.all([
        continueMoves(directory(), env, { budgetMs: 5 }),
        continueMoves(directory(), env, { budgetMs: 5 }),
        continueMoves(directory(), env, { budgetMs: 5 }),
      ]);
    }
    expect(await accountOf(client.accountId)).toMatchObject({ shard: "B", move: null });
    expect(await tenantRows(env.SHARD_B!, client.accountId)).toEqual(before);
    expect(Object.values(await tenantRows(env.SHARD_A!, client.accountId)).every((n) => n === 0)).toBe(true);
    expect((await call("GET", "/v1/counterparties/?page_size=100", { headers: client.headers })).json.count).toBe(30);
  });

  it("waits at the drain for an attempt in flight, and goes back to copying when the check finds the copy different, losing nothing", async () => {
    const { client } = await makeTenant({ shard: "A" });
    const { subscription } = await subscribeToReceiver(client);
    await makeCounterparty(client, "buyer");
    const now = Date.now();
    // An attempt under way on A: its lease holds until its outcome is recorded.
    await env
      .SHARD_A!.prepare(
        `insert into webhook_deliveries (id, subscription_id, account_id, payment_id, body, status, attempts, next_attempt_at, enqueued_at, leased_until, lease_token, created_at, updated_at)
       values ('in-flight-' || ?1, ?2, ?1, 'pmt_test', '{}', 'pending', 1, ?3, ?3, ?4, 'worker', ?3, ?3)`,
      )
      .bind(client.accountId, subscription.id, now, now + 60_000)
      .run();
    // A delivery handed over at its creation and never since: while the move holds it, the sweeper's look at the logs passes it.
    await env
      .SHARD_A!.prepare(
        `insert into webhook_deliveries (id, subscription_id, account_id, payment_id, body, status, attempts, next_attempt_at, enqueued_at, created_at, updated_at)
       values ('fresh-' || ?1, ?2, ?1, 'pmt_test', '{}', 'pending', 0, ?3, ?3, ?3, ?3)`,
      )
      .bind(client.accountId, subscription.id, now + 1)
      .run();
    expect((await move(client.accountId, "B")).status).toBe(202);
    for (let i = 0; i < 200 && (await accountOf(client.accountId)).move.state === "copying"; i++) await continueMoves(directory(), env, { budgetMs: 5 });
    expect((await accountOf(client.accountId)).move.state).toBe("draining");
    // Writes still work while it drains.
    await makeCounterparty(client, "supplier");
    await env
      .SHARD_A!.prepare("update webhook_deliveries set leased_until = null, lease_token = null where id = 'in-flight-' || ?1")
      .bind(client.accountId)
      .run();

    // A copy that went wrong (a row changed on B behind the move's back) fails the check: back to copying.
    await env.SHARD_B!.prepare("update counterparties set name = 'tampered' where account_id = ?1").bind(client.accountId).run();
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    await continueMoves(directory(), env, { budgetMs: 5 });
    expect(errors.mock.calls.some(([line]) => String(line).includes('"move_cutover_failed"'))).toBe(true);
    expect(await accountOf(client.accountId)).toMatchObject({ shard: "A", move: { state: "copying" } });
    // Its fresh delivery is due again on A, for the sweeper's walk of the due index.
    expect(await env.SHARD_A!.prepare("select enqueued_at from webhook_deliveries where id = 'fresh-' || ?1").bind(client.accountId).first()).toEqual({
      enqueued_at: null,
    });
    expect(
      (await call("POST", "/v1/counterparties/", { body: { internal_id: "after-check", type: "buyer", name: "Later" }, headers: client.headers })).status,
    ).toBe(201);
    // The copy from the start puts it right, and the move completes.
    for (let i = 0; i < 200 && (await accountOf(client.accountId)).move !== null; i++) await continueMoves(directory(), env, { budgetMs: 5 });
    expect(await accountOf(client.accountId)).toMatchObject({ shard: "B", move: null });
    const names = (await call("GET", "/v1/counterparties/?page_size=100", { headers: client.headers })).json.results.map((row: { name: string }) => row.name);
    expect(names).toHaveLength(3);
    expect(names).not.toContain("tampered");
  });

  it("answers writes 503 with Retry-After while the old shard is frozen, and serves reads", async () => {
    const { client } = await makeTenant({ shard: "A" });
    await makeCounterparty(client, "buyer");
    await env.SHARD_A!.prepare("insert into moves (account_id, state, started_at) values (?1, 'frozen', ?2)").bind(client.accountId, Date.now()).run();
    try {
      const refused = await call("POST", "/v1/counterparties/", { body: { internal_id: "x-1", type: "buyer", name: "X" }, headers: client.headers });
      expect([refused.status, refused.json, refused.headers.get("Retry-After")]).toEqual([503, { detail: "Account is moving; retry shortly." }, "2"]);
      expect((await call("GET", "/v1/counterparties/", { headers: client.headers })).json.count).toBe(1);
    } finally {
      await env.SHARD_A!.prepare("delete from moves where account_id = ?1").bind(client.accountId).run();
    }
    expect((await call("POST", "/v1/counterparties/", { body: { internal_id: "x-1", type: "buyer", name: "X" }, headers: client.headers })).status).toBe(201);
  });

  it("refuses a move to an unknown, closed or the same shard with 400, a second move with 409, an unknown account with 404, and erasure while moving with 409", async () => {
    const { client } = await makeTenant({ shard: "A" });
    expect(await move(client.accountId, "Z")).toMatchObject({ status: 400, json: { shard: ['No shard "Z" is configured.'] } });
    expect(await move(client.accountId, "A")).toMatchObject({ status: 400, json: { shard: ['The account is already on shard "A".'] } });
    expect(await move(client.accountId, "")).toMatchObject({ status: 400 });
    expect(await move("acct_nobody", "B")).toMatchObject({ status: 404, json: { detail: "Not found." } });
    await call("PATCH", "/admin/shards/B/", { body: { open: false }, headers: ADMIN });
    try {
      expect(await move(client.accountId, "B")).toMatchObject({ status: 400, json: { shard: ['Shard "B" is closed to new accounts.'] } });
    } finally {
      await call("PATCH", "/admin/shards/B/", { body: { open: true }, headers: ADMIN });
    }
    expect((await move(client.accountId, "B")).status).toBe(202);
    expect(await move(client.accountId, "B")).toMatchObject({ status: 409, json: { detail: "The account is already moving." } });
    expect(await call("DELETE", `/admin/accounts/${client.accountId}/`, { headers: ADMIN })).toMatchObject({ status: 409 });
    for (let i = 0; i < 20 && (await accountOf(client.accountId)).move !== null; i++) await continueMoves(directory(), env);
    expect(await accountOf(client.accountId)).toMatchObject({ shard: "B", move: null });
    expect((await call("GET", "/v1/counterparties/", { headers: client.headers })).status).toBe(200);
  });

  it("has every move trigger the table list names on every shard, and no other", async () => {
    const expected = MOVED_TABLES.flatMap(moveTriggers)
      .map((text) => /CREATE TRIGGER "([^"]+)"/.exec(text)![1])
      .sort();
    for (const shard of [env.SHARD_A!, env.SHARD_B!]) {
      const { results } = await shard.prepare("select name, sql from sqlite_master where type = 'trigger' order by name").all<{ name: string; sql: string }>();
      expect(results.map((row) => row.name)).toEqual(expected);
      const byName = new Map(MOVED_TABLES.flatMap(moveTriggers).map((text) => [/CREATE TRIGGER "([^"]+)"/.exec(text)![1], text]));
      for (const row of results) expect(`${row.sql};`).toBe(byName.get(row.name));
    }
  });
});
