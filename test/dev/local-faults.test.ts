import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { deliveriesQueue, retryTimeScale } from "../../src/dev/local-faults";

describe("the soak's settings", () => {
  const base = { ...env, ALLOW_LOCAL_WEBHOOK_URLS: "true" };

  it.each([
    [{ RETRY_TIME_SCALE: "0.001" }, 0.001],
    [{ RETRY_TIME_SCALE: "0" }, 1],
    [{ RETRY_TIME_SCALE: "2" }, 1],
    [{ RETRY_TIME_SCALE: "fast" }, 1],
    [{}, 1],
    [{ RETRY_TIME_SCALE: "0.001", ALLOW_LOCAL_WEBHOOK_URLS: "false" }, 1],
  ])("reads the retry clock %j as %d", (settings, scale) => {
    expect(retryTimeScale({ ...base, ...settings })).toBe(scale);
  });

  it("fails queue sends only when asked, and never where local URLs are not allowed", async () => {
    expect(deliveriesQueue(base)).toBe(env.DELIVERIES);
    expect(deliveriesQueue({ ...base, QUEUE_SEND_FAILURES: "1", ALLOW_LOCAL_WEBHOOK_URLS: "false" })).toBe(env.DELIVERIES);
    await expect(deliveriesQueue({ ...base, QUEUE_SEND_FAILURES: "1" }).send({ delivery_id: "x", shard: "A" })).rejects.toThrow(/injected/);
  });
});
