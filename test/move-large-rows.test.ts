import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createDb } from "../src/db/client";
import { continueMoves } from "../src/services/moves";
import { ADMIN, call, makeTenant } from "./helpers/api";
import { subscribeUnanswered } from "./helpers/webhooks";
import { endedDelivery } from "./helpers/large-rows";

// A move of the largest rows the API makes (issue: moves of accounts with large rows failed with
// SQLITE_TOOBIG): the bulk copy, the apply of rows changed during it, and the check at the freeze.
const directory = () => createDb(env.DB);
const accountOf = async (accountId: string) => (await call("GET", `/admin/accounts/${accountId}/`, { headers: ADMIN })).json;

describe("moving an account with large rows", () => {
  it("copies and applies deliveries with full-detail bodies and a row near D1's 2 MB, to the byte", async () => {
    const { client, account } = await makeTenant({ shard: "A" });
    const subscription = await subscribeUnanswered(client);
    const a = env.SHARD_A!;
    const insert = (id: string, body: string, at: number) => endedDelivery(a, { id, subscriptionId: subscription.id, accountId: account.id, body, at });
    await a.batch(Array.from({ length: 60 }, (_, i) => insert(`big-${i}`, `{"object":"${"y".repeat(100_000)}"}`, 5000 + i)));
    await insert("near-limit", '"'.repeat(1_900_000), 6000).run();
    const bodies = async (d1: D1Database) =>
      (
        await d1
          .prepare("select id, length(body) as n, substr(body, 1, 3) as head from webhook_deliveries where account_id = ? order by id")
          .bind(account.id)
          .all()
      ).results;

    expect((await call("POST", `/admin/accounts/${account.id}/move/`, { body: { shard: "B" }, headers: ADMIN })).status).toBe(202);
    await continueMoves(directory(), env, { budgetMs: 5 });
    // Changed while it copies: the log applies them, large as they are.
    await a.prepare("update webhook_deliveries set body = ?2 where id = ?1").bind("near-limit", "'".repeat(1_950_000)).run();
    await a
      .prepare("update webhook_deliveries set body = ?2 where id = ?1")
      .bind("big-7", `{"object":"${"z".repeat(150_000)}"}`)
      .run();
    const expected = await bodies(a);
    for (let i = 0; i < 200 && (await accountOf(account.id)).move !== null; i++) await continueMoves(directory(), env, { budgetMs: 5 });
    expect(await accountOf(account.id)).toMatchObject({ shard: "B", move: null });
    expect(await bodies(env.SHARD_B!)).toEqual(expected);
    expect(await bodies(a)).toEqual([]);
  });
});
