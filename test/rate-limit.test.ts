import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { RATE_LIMIT_PERIOD_S } from "../src/middleware/auth";
import { FAILURE_WINDOW_MS, LIMITS, throttledFor } from "../src/services/auth-throttle";
import { ADMIN, basic, call, makeTenant, d1Timing } from "./helpers/api";

describe("the per-user rate limit", () => {
  it("is wrangler.toml's 1,000 requests per 10 s for each API user, the period Retry-After names", () => {
    const [limit] = JSON.parse(env.RATE_LIMIT_CONFIG) as { name: string; simple: { limit: number; period: number } }[];
    expect(limit).toMatchObject({ name: "API_RATE_LIMIT", simple: { limit: 1000, period: RATE_LIMIT_PERIOD_S } });
  });

  it("answers 429 with Retry-After, in the contract's error shape, once a user has used its period's requests; other users go on", async () => {
    const { client, processor } = await makeTenant();
    // Cloudflare's binding counts per key over a period; this one counts without a clock, so the
    // test does not depend on how many requests this machine makes in 10 s.
    const used = new Map<string, number>();
    const API_RATE_LIMIT = {
      limit: async ({ key }: { key: string }) => {
        used.set(key, (used.get(key) ?? 0) + 1);
        return { success: used.get(key)! <= 1000 };
      },
    } as unknown as RateLimit;
    const get = (user = client) => call("GET", "/v1/counterparties/?page_size=1", { headers: user.headers, bindings: { API_RATE_LIMIT } });
    for (let round = 0; round < 10; round++) {
      const answers = await Promise.all(Array.from({ length: 100 }, () => get()));
      expect(answers.map((res) => res.status)).toEqual(Array(100).fill(200));
    }
    const refused = await get();
    expect(refused.status).toBe(429);
    expect(refused.json).toEqual({ detail: "Request was throttled. Expected available in 10 seconds." });
    expect(refused.headers.get("retry-after")).toBe("10");
    expect(used.get(client.username)).toBe(1001);
    expect((await get(processor)).status).toBe(200);
  });

  it("is lifted by RATE_LIMITING=off (local benchmarks only)", async () => {
    const { client } = await makeTenant();
    const refuse = { limit: async () => ({ success: false }) } as unknown as RateLimit;
    expect((await call("GET", "/v1/counterparties/", { headers: client.headers, bindings: { API_RATE_LIMIT: refuse } })).status).toBe(429);
    expect((await call("GET", "/v1/counterparties/", { headers: client.headers, bindings: { API_RATE_LIMIT: refuse, RATE_LIMITING: "off" } })).status).toBe(
      200,
    );
  });
});

describe("wrong credentials", () => {
  const wrong = (username: string, headers: Record<string, string> = {}) =>
    call("GET", "/v1/counterparties/", { headers: { authorization: basic(username, "not-the-password"), ...headers } });

  it("answer 401 until a username has failed 20 times in a minute, then 429 for the rest of it, the right password too; other users go on", async () => {
    const { client, processor } = await makeTenant();
    const answers = [];
    for (let i = 0; i < LIMITS.user; i++) answers.push((await wrong(client.username)).status);
    expect(answers).toEqual(Array(LIMITS.user).fill(401));
    const refused = await wrong(client.username);
    expect(refused.status).toBe(429);
    expect(refused.json).toEqual({ detail: expect.stringMatching(/^Request was throttled\. Expected available in \d+ seconds?\.$/) });
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(Number(refused.headers.get("retry-after"))).toBeLessThanOrEqual(60);
    // While throttled, no guess is checked: the right password cannot be told from a wrong one.
    expect((await call("GET", "/v1/counterparties/", { headers: client.headers })).status).toBe(429);
    expect((await call("GET", "/v1/counterparties/", { headers: processor.headers })).status).toBe(200);
  });

  it("from one address answer 429 once it has failed 50 times in a minute, whatever usernames it tried; other addresses go on", async () => {
    const { client } = await makeTenant();
    const from = { "cf-connecting-ip": `198.51.100.${Math.floor(Math.random() * 250)}` };
    for (let i = 0; i < LIMITS.address; i++) expect((await wrong(`nobody-${crypto.randomUUID()}`, from)).status).toBe(401);
    expect((await wrong(`nobody-${crypto.randomUUID()}`, from)).status).toBe(429);
    expect((await call("GET", "/v1/counterparties/", { headers: { ...client.headers, ...from } })).status).toBe(429);
    expect((await call("GET", "/v1/counterparties/", { headers: { ...client.headers, "cf-connecting-ip": "203.0.113.9" } })).status).toBe(200);
  });

  it("to the admin API answer 429 once an address has sent 20 wrong tokens in a minute; the right token from elsewhere goes on", async () => {
    const from = { "cf-connecting-ip": `2001:db8::${Math.floor(Math.random() * 9999)}` };
    for (let i = 0; i < LIMITS.admin; i++) {
      expect((await call("GET", "/admin/accounts/", { headers: { authorization: "Bearer wrong", ...from } })).status).toBe(401);
    }
    expect((await call("GET", "/admin/accounts/", { headers: { authorization: "Bearer wrong", ...from } })).status).toBe(429);
    expect((await call("GET", "/admin/accounts/", { headers: { ...ADMIN, ...from } })).status).toBe(429);
    expect((await call("GET", "/admin/accounts/", { headers: { ...ADMIN, "cf-connecting-ip": "2001:db8::1:1" } })).status).toBe(200);
  });
});

describe("the failure counts read with every credential check", () => {
  it("cost no D1 row read and no round trip while there are no failures, with a client address too", async () => {
    const { client } = await makeTenant();
    const cost = async (headers: Record<string, string>) => {
      const res = await call("GET", "/v1/counterparties/?page_size=1", { headers: { ...client.headers, ...headers }, bindings: { SERVER_TIMING: "true" } });
      const { rowsRead, calls } = d1Timing(res);
      return { rows: rowsRead, calls };
    };
    const without = await cost({});
    expect(await cost({ "cf-connecting-ip": "192.0.2.77" })).toEqual(without);
    expect(without.calls).toBe(2);
  });
});

describe("throttledFor", () => {
  const now = 1_000_000;
  it.each([
    [[], null],
    [[{ key: "user:a", windowStart: now - 1_000, failures: LIMITS.user - 1 }], null],
    [[{ key: "user:a", windowStart: now - 1_000, failures: LIMITS.user }], 59],
    [[{ key: "user:a", windowStart: now - FAILURE_WINDOW_MS, failures: 1_000 }], null],
    [[{ key: "user:a", windowStart: now - FAILURE_WINDOW_MS + 1, failures: LIMITS.user }], 1],
    [[{ key: "address:x", windowStart: now, failures: LIMITS.user }], null],
    [[{ key: "address:x", windowStart: now, failures: LIMITS.address }], 60],
    [[{ key: "admin:any", windowStart: now - 30_000, failures: LIMITS.admin }], 30],
    [
      [
        { key: "user:a", windowStart: now - 50_000, failures: LIMITS.user },
        { key: "address:x", windowStart: now - 10_000, failures: LIMITS.address },
      ],
      50,
    ],
  ])("%j: throttled for %j s", (rows, seconds) => {
    expect(throttledFor(rows, now)).toBe(seconds);
  });
});
