import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { ADMIN, call, makeAccount, unique } from "./helpers/api";

describe("admin API", () => {
  it("makes an account", async () => {
    const res = await call("POST", "/admin/accounts/", { body: { name: "Acme" }, headers: ADMIN });
    expect(res.status).toBe(201);
    expect(res.json).toEqual({
      id: expect.stringMatching(/^acct_[A-Za-z0-9_-]{16,}$/),
      name: "Acme",
      shard: expect.stringMatching(/^[AB]$/),
      created: expect.stringMatching(/\.\d{3}Z$/),
      move: null,
      verify_endpoints: false,
    });
  });

  it("lists accounts in the envelope", async () => {
    const made = await makeAccount();
    const res = await call("GET", "/admin/accounts/?page_size=1000", { headers: ADMIN });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ count: expect.any(Number), previous: null });
    let found = res.json.results.some((a: { id: string }) => a.id === made.id);
    let next = res.json.next;
    while (!found && next) {
      const page = await call("GET", new URL(next).pathname + new URL(next).search, { headers: ADMIN });
      found = page.json.results.some((a: { id: string }) => a.id === made.id);
      next = page.json.next;
    }
    expect(found).toBe(true);
  });

  it("makes an API user whose password is shown once and stored hashed", async () => {
    const account = await makeAccount();
    const username = unique("alice.o+ps@x_y");
    const res = await call("POST", `/admin/accounts/${account.id}/api-users/`, { body: { username }, headers: ADMIN });
    expect(res.status).toBe(201);
    expect(res.json).toEqual({
      username,
      role: "client",
      account_id: account.id,
      password: expect.stringMatching(/^[A-Za-z0-9_-]{43,}$/),
      created: expect.any(String),
    });
    const stored = await env.DB.prepare("select password_hash from api_users where username = ?").bind(username).first<{ password_hash: string }>();
    expect(stored!.password_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(stored!.password_hash).not.toContain(res.json.password);
  });

  it("makes a processor", async () => {
    const account = await makeAccount();
    const res = await call("POST", `/admin/accounts/${account.id}/api-users/`, { body: { username: unique("p"), role: "processor" }, headers: ADMIN });
    expect(res.json.role).toBe("processor");
  });

  it.each([
    [{ username: "ab" }, "username"],
    [{ username: "x".repeat(151) }, "username"],
    [{ username: "has space" }, "username"],
    [{ username: "okname", role: "admin" }, "role"],
    [{}, "username"],
  ])("refuses %j naming the field", async (body, field) => {
    const account = await makeAccount();
    const res = await call("POST", `/admin/accounts/${account.id}/api-users/`, { body, headers: ADMIN });
    expect(res.status).toBe(400);
    expect(res.json[field]).toEqual([expect.any(String)]);
  });

  it("keeps usernames unique across accounts", async () => {
    const [a, b] = [await makeAccount(), await makeAccount()];
    const username = unique("same");
    await call("POST", `/admin/accounts/${a.id}/api-users/`, { body: { username }, headers: ADMIN });
    const res = await call("POST", `/admin/accounts/${b.id}/api-users/`, { body: { username }, headers: ADMIN });
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ username: ["A user with that username already exists."] });
  });

  it("answers 404 for an unknown account or user", async () => {
    const account = await makeAccount();
    expect((await call("POST", "/admin/accounts/acct_nope/api-users/", { body: { username: unique() }, headers: ADMIN })).status).toBe(404);
    expect((await call("POST", `/admin/accounts/${account.id}/api-users/ghost/rotate/`, { headers: ADMIN })).status).toBe(404);
    expect((await call("DELETE", `/admin/accounts/${account.id}/api-users/ghost/`, { headers: ADMIN })).status).toBe(404);
  });

  it("does not rotate or delete another account's user", async () => {
    const [a, b] = [await makeAccount(), await makeAccount()];
    const username = unique();
    await call("POST", `/admin/accounts/${a.id}/api-users/`, { body: { username }, headers: ADMIN });
    expect((await call("POST", `/admin/accounts/${b.id}/api-users/${username}/rotate/`, { headers: ADMIN })).status).toBe(404);
    expect((await call("DELETE", `/admin/accounts/${b.id}/api-users/${username}/`, { headers: ADMIN })).status).toBe(404);
  });

  it.each([
    ["no header", {}],
    ["a wrong token", { authorization: "Bearer not-the-token" }],
    ["Basic instead of Bearer", { authorization: `Basic ${btoa("a:b")}` }],
  ])("answers 401 with %s", async (_label, headers) => {
    const res = await call("GET", "/admin/accounts/", { headers });
    expect(res.status).toBe(401);
    expect(res.json.detail).toEqual(expect.any(String));
  });
});
