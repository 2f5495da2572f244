import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createPaymentsClient, newerBookmark } from "../../packages/client/src/index";
import worker from "../../src/index";
import { BASE, basic, unique } from "../helpers/api";
import { laggingReplica } from "../helpers/replica-d1";
import { migrateReplicas } from "../helpers/replicas";

await migrateReplicas();

/** The typed client against a shard whose reads a lagging replica serves (test/helpers/replica-d1.ts). */
function onReplica() {
  const directory = laggingReplica(env.DB, env.REPLICA_DB);
  const replica = laggingReplica(env.SHARD_A!, env.REPLICA_SHARD);
  const send = async (request: Request) => {
    const ctx = createExecutionContext();
    const response = await worker.fetch(request as Parameters<typeof worker.fetch>[0], { ...env, DB: directory.binding, SHARD_A: replica.binding }, ctx);
    await waitOnExecutionContext(ctx);
    return response;
  };
  return { replica, send };
}

describe("the typed client on a lagging read replica", () => {
  it("sends back the newest bookmark by itself, so every read and every page has its own writes", async () => {
    const { replica, send } = onReplica();
    const admin = createPaymentsClient({ baseUrl: BASE, auth: { token: env.ADMIN_TOKEN! }, fetch: send });
    const account = (await admin.POST("/admin/accounts/", { body: { name: unique("bookmarks"), shard: "A" } })).data!;
    const user = (
      await admin.POST("/admin/accounts/{account_id}/api-users/", { params: { path: { account_id: account.id } }, body: { username: unique("u") } })
    ).data!;
    const api = createPaymentsClient({ baseUrl: BASE, auth: { username: user.username, password: user.password }, fetch: send });
    expect(api.bookmark()).toBeNull();
    const made: string[] = [];
    for (let i = 0; i < 5; i++) {
      made.push((await api.POST("/v1/counterparties/", { body: { internal_id: `b-${i}`, type: "buyer", name: `B${i}` } })).data!.id);
      expect((await api.GET("/v1/counterparties/{id}/", { params: { path: { id: made[i]! } } })).response.status).toBe(200);
      const seen: string[] = [];
      for await (const row of api.each("/v1/counterparties/", { params: { query: { page_size: 2 } } })) seen.push(row.id);
      expect(seen).toEqual(made);
    }
    expect(replica.state.replicaReads).toBeGreaterThan(10);
    // A read without the bookmark, from the replica as it is, misses a write the client just made.
    made.push((await api.POST("/v1/counterparties/", { body: { internal_id: "b-last", type: "buyer", name: "Last" } })).data!.id);
    const bare = await send(new Request(`${BASE}/v1/counterparties/`, { headers: { authorization: basic(user.username, user.password) } }));
    expect(((await bare.json()) as { count: number }).count).toBeLessThan(made.length);
  });
});

describe("newerBookmark", () => {
  const cases: [string, string | null, string, string][] = [
    ["the first one", null, "b1.A.00000002.t", "b1.A.00000002.t"],
    ["a newer one on the same shard", "b1.A.00000002.t", "b1.A.00000003.u", "b1.A.00000003.u"],
    ["an older one that came later on the same shard", "b1.A.00000003.u", "b1.A.00000002.t", "b1.A.00000003.u"],
    [
      "D1's bookmarks, compared as text",
      "b1.A.00000001-0000000a-00000000-ff.t",
      "b1.A.00000001-00000009-00000000-ff.u",
      "b1.A.00000001-0000000a-00000000-ff.t",
    ],
    ["one from the shard the account moved to", "b1.A.00000009.t", "b1.B.00000001.u", "b1.B.00000001.u"],
  ];
  for (const [name, held, came, kept] of cases) it(name, () => expect(newerBookmark(held, came)).toBe(kept));
});
