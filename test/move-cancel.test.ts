import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createDb } from "../src/db/client";
import { continueMoves } from "../src/services/moves";
import { continueErasures } from "../src/services/erasure";
import { ADMIN, call, makeCounterparty, makeTenant } from "./helpers/api";
import { tenantRows } from "./helpers/tenant-rows";
import { subscribeUnanswered } from "./helpers/webhooks";

// Moves that cannot progress, and canceling a move (docs/operations.md, "Shards").
const directory = () => createDb(env.DB);
const move = (accountId: string, shard: string, bindings = {}) =>
  call("POST", `/admin/accounts/${accountId}/move/`, { body: { shard }, headers: ADMIN, bindings });
const cancel = (accountId: string, bindings = {}) => call("DELETE", `/admin/accounts/${accountId}/move/`, { headers: ADMIN, bindings });
const accountOf = async (accountId: string) => (await call("GET", `/admin/accounts/${accountId}/`, { headers: ADMIN })).json;
const none = (rows: Record<string, number>) => Object.values(rows).every((n) => n === 0);

describe("a move that cannot progress", () => {
  it("is refused alike, out of a shard the configuration lacks and into one (400 keyed by shard)", async () => {
    const { account } = await makeTenant({ shard: "A" });
    const out = await move(account.id, "B", { SHARD_A: undefined });
    expect(out).toMatchObject({ status: 400, json: { shard: ['The account\'s shard "A" is not configured: nothing can be moved out of it.'] } });
    const into = await move(account.id, "Z");
    expect(into).toMatchObject({ status: 400, json: { shard: ['No shard "Z" is configured.'] } });
    expect((await accountOf(account.id)).move).toBeNull();
  });
});

describe("canceling a move", () => {
  it("runs bounded statements on the source: what is left of a long log goes with the account's rows when it is erased", async () => {
    const { client, account } = await makeTenant({ shard: "A" });
    await makeCounterparty(client, "buyer");
    expect((await move(account.id, "B")).status).toBe(202);
    await continueMoves(directory(), env, { budgetMs: 5 });
    expect((await accountOf(account.id)).move.state).toBe("copying");
    // A long log, as a busy account's copy leaves one.
    await env
      .SHARD_A!.prepare(
        `insert into move_log (account_id, tbl, key) with recursive n(i) as (select 1 union all select i + 1 from n where i < 12000) select ?1, 'counterparties', '["x' || i || '"]' from n`,
      )
      .bind(account.id)
      .run();
    const logged = async () =>
      (await env.SHARD_A!.prepare("select count(*) as n from move_log where account_id = ?").bind(account.id).first<{ n: number }>())!.n;
    const before = await logged();
    expect((await cancel(account.id)).status).toBe(202);
    expect(await logged()).toBe(before - 5000);
    for (let i = 0; i < 200 && (await accountOf(account.id)).move !== null; i++) await continueMoves(directory(), env, { budgetMs: 5 });
    expect((await makeCounterparty(client, "supplier")).id).toMatch(/^cpty_/);
    expect(await logged()).toBe(before - 5000);
    expect((await call("DELETE", `/admin/accounts/${account.id}/`, { headers: ADMIN })).status).toBe(202);
    for (let run = 0; run < 20 && (await logged()) > 0; run++) await continueErasures(directory(), env);
    expect(await logged()).toBe(0);
  });

  it("before the cut-over leaves the account whole on its shard, removes the copy from the target in bounded steps, and lets it move again", async () => {
    const { client, account } = await makeTenant({ shard: "A" });
    for (let i = 0; i < 12; i++) await makeCounterparty(client, i % 2 ? "buyer" : "supplier");
    const before = await tenantRows(env.SHARD_A!, account.id);
    expect((await move(account.id, "B")).status).toBe(202);
    for (let i = 0; i < 3; i++) await continueMoves(directory(), env, { budgetMs: 5 }); // part of it copied to B
    expect((await accountOf(account.id)).move.state).toBe("copying");
    expect(none(await tenantRows(env.SHARD_B!, account.id))).toBe(false);

    // A delivery handed over at its creation and lost meanwhile: the sweeper's fresh walk left it alone during the move.
    const subscription = await subscribeUnanswered(client);
    const fresh = crypto.randomUUID();
    const at = Date.now() - 600_000;
    await env
      .SHARD_A!.prepare(
        `insert into webhook_deliveries (id, subscription_id, account_id, payment_id, body, status, attempts, next_attempt_at, enqueued_at, created_at, updated_at)
       values (?1, ?2, ?3, 'pmt_x', '{}', 'pending', 0, ?4, ?4, ?4, ?4)`,
      )
      .bind(fresh, subscription.id, account.id, at)
      .run();

    const canceled = await cancel(account.id);
    expect(canceled).toMatchObject({ status: 202, json: { shard: "A", move: { to: "B", state: "canceling" } } });
    // It is due again, for the sweeper's walk of the due index.
    expect(await env.SHARD_A!.prepare("select enqueued_at from webhook_deliveries where id = ?").bind(fresh).first()).toEqual({ enqueued_at: null });
    // The source logs no more: its moves row and log are gone, and writes work as ever.
    expect(
      await env
        .SHARD_A!.prepare("select (select count(*) from moves where account_id = ?1) + (select count(*) from move_log where account_id = ?1) as n")
        .bind(account.id)
        .first(),
    ).toEqual({ n: 0 });
    expect((await makeCounterparty(client, "buyer")).id).toMatch(/^cpty_/);
    for (let i = 0; i < 200 && (await accountOf(account.id)).move !== null; i++) await continueMoves(directory(), env, { budgetMs: 5 });
    expect(await accountOf(account.id)).toMatchObject({ shard: "A", move: null });
    expect(none(await tenantRows(env.SHARD_B!, account.id))).toBe(true);
    expect(await env.SHARD_B!.prepare("select count(*) as n from moves where account_id = ?").bind(account.id).first()).toEqual({ n: 0 });
    expect(await tenantRows(env.SHARD_A!, account.id)).toEqual({
      ...before,
      counterparties: before.counterparties! + 1,
      webhook_subscriptions: 1,
      webhook_deliveries: 1,
    });

    // And it moves again, to the end.
    expect((await move(account.id, "B")).status).toBe(202);
    for (let i = 0; i < 200 && (await accountOf(account.id)).move !== null; i++) await continueMoves(directory(), env, { budgetMs: 5 });
    expect(await accountOf(account.id)).toMatchObject({ shard: "B", move: null });
    expect((await call("GET", "/v1/counterparties/?page_size=100", { headers: client.headers })).json.count).toBe(13);
  });

  it("to a shard the configuration no longer has ends the move at once; erasure then works", async () => {
    const { account } = await makeTenant({ shard: "A" });
    expect((await move(account.id, "B")).status).toBe(202);
    expect(await cancel(account.id, { SHARD_B: undefined })).toMatchObject({ status: 202, json: { shard: "A", move: null } });
    expect((await call("DELETE", `/admin/accounts/${account.id}/`, { headers: ADMIN })).status).toBe(202);
  });

  it("answers 409 when there is no move, and when the move is past its cut-over; 404 for no account", async () => {
    const { account } = await makeTenant({ shard: "A" });
    expect(await cancel(account.id)).toMatchObject({ status: 409, json: { detail: "The account is not moving." } });
    expect((await move(account.id, "B")).status).toBe(202);
    for (const state of ["frozen", "leaving"]) {
      await env.DB.prepare("update accounts set move_state = ?2 where id = ?1").bind(account.id, state).run();
      expect(await cancel(account.id)).toMatchObject({
        status: 409,
        json: { detail: "The move is past its cut-over and is finishing: it cannot be canceled." },
      });
    }
    await env.DB.prepare("update accounts set move_state = 'copying' where id = ?1").bind(account.id).run();
    expect((await cancel(account.id)).status).toBe(202);
    expect((await cancel("acct_nobody000000000000")).status).toBe(404);
  });
});
