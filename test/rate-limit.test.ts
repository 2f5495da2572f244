import { describe, expect, it } from "vitest";
import { call, makeTenant } from "./helpers/api";

describe("the per-user rate limit", () => {
  it("answers 429 with Retry-After, in the contract's error shape, once a user passes 1,000 requests in 10 s; other users go on", async () => {
    const { client, processor } = await makeTenant();
    const get = () => call("GET", "/v1/counterparties/?page_size=1", { headers: client.headers });
    // Rounds of 100 until the first refusal: a window that turns over mid-run only delays it.
    let passed = 0;
    let refused: Awaited<ReturnType<typeof get>> | undefined;
    while (!refused && passed <= 2_100) {
      const answers = await Promise.all(Array.from({ length: 100 }, get));
      expect(answers.filter((res) => res.status !== 200 && res.status !== 429)).toEqual([]);
      passed += answers.filter((res) => res.status === 200).length;
      refused = answers.find((res) => res.status === 429);
    }
    expect(passed).toBeGreaterThanOrEqual(1_000);
    expect(refused?.status).toBe(429);
    expect(refused!.json).toEqual({ detail: "Request was throttled. Expected available in 10 seconds." });
    expect(refused!.headers.get("retry-after")).toBe("10");
    expect((await call("GET", "/v1/counterparties/?page_size=1", { headers: processor.headers })).status).toBe(200);
  }, 60_000);

  it("is lifted by RATE_LIMITING=off (local benchmarks only)", async () => {
    const { client } = await makeTenant();
    const refuse = { limit: async () => ({ success: false }) } as unknown as RateLimit;
    expect((await call("GET", "/v1/counterparties/", { headers: client.headers, bindings: { API_RATE_LIMIT: refuse } })).status).toBe(429);
    expect((await call("GET", "/v1/counterparties/", { headers: client.headers, bindings: { API_RATE_LIMIT: refuse, RATE_LIMITING: "off" } })).status).toBe(200);
  });
});
