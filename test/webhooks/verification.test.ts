// Endpoint ownership (docs/interface.md, "Endpoint ownership"): where the account requires it, a
// subscription's deliveries are held until its receiver echoes a signed challenge.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { ADMIN, call, makePayment, makeTenant, shardD1, unique } from "../helpers/api";
import { HOOK_USER, mailbox, receivedAt, receiverUrl, waitFor, type Received } from "../helpers/webhooks";
import { afterChallenge, refusalOf, VERIFY_FOR_MS, verificationStarts } from "../../src/webhooks/subscriptions/verification";
import { sends, sendsSql, VERIFICATIONS } from "../../src/db/schema";
import { continueChallenges } from "../../src/webhooks";
import { createDb } from "../../src/db/client";
import { challengeAnswer, verify } from "../../packages/verify/index.js";

const isChallenge = (r: Received) => r.headers["hook-event"] === "webhook.verification";

/** An account that requires proof, and a receiver path set up before its subscription is made. */
async function requiring() {
  const tenant = await makeTenant();
  const patched = await call("PATCH", `/admin/accounts/${tenant.account.id}/`, { body: { verify_endpoints: true }, headers: ADMIN });
  expect(patched.status).toBe(200);
  expect(patched.json.verify_endpoints).toBe(true);
  return tenant;
}

async function subscribe(user: { headers: Record<string, string> }, echo?: "none" | "wrong") {
  const box = await mailbox({ ...HOOK_USER, echo }, `/hooks/${unique("owned")}`);
  const res = await call("POST", "/v1/webhooks/", {
    body: { event: "payment.changed", url: box.url, content_type: "application/json", payment_status: true, ...HOOK_USER },
    headers: user.headers,
  });
  expect(res.status).toBe(201);
  return { subscription: res.json, box };
}

const record = async (user: { headers: Record<string, string> }, id: string) => (await call("GET", `/v1/webhooks/${id}/`, { headers: user.headers })).json;

describe("endpoint ownership: the rules", () => {
  it.each([
    ["a 2xx echoing the challenge", 200, '{"challenge":"c1"}', null],
    ["a 204 echoing it", 204, '{"challenge":"c1"}', null],
    ["200 without it", 200, '{"received":true}', "the answer has no challenge"],
    ["200 with another", 200, '{"challenge":"c2"}', "the answer's challenge is not the one sent"],
    ["200 that is not JSON (or cut at 4 KiB)", 200, `{"challenge":"c1"${" ".repeat(4090)}`, "the answer is not JSON"],
    ["an echo with a 500", 500, '{"challenge":"c1"}', "HTTP 500"],
    ["no answer", null, null, "no answer"],
  ])("%s", (_, status, answer, refusal) => {
    expect(refusalOf(status, answer, "c1")).toBe(refusal);
  });

  it("verifies on an echo, tries again on the retry schedule, and fails after 3 days", () => {
    const t0 = 1_000_000_000;
    const random = () => 0.5;
    expect(verificationStarts(true, t0)).toEqual({ verification: "pending", verificationStartedAt: t0, verificationAttempts: 0, verificationNextAt: t0 });
    expect(verificationStarts(false, t0).verification).toBe("not_required");
    expect(afterChallenge({ startedAt: t0, attempts: 0 }, null, t0 + 10, random)).toMatchObject({ verification: "verified", verificationNextAt: null });
    expect(afterChallenge({ startedAt: t0, attempts: 0 }, "HTTP 500", t0 + 10, random)).toMatchObject({
      verification: "pending",
      verificationAttempts: 1,
      verificationNextAt: t0 + 10 + 5_000,
    });
    expect(afterChallenge({ startedAt: t0, attempts: 1 }, "no answer", t0 + 5_000, random).verificationNextAt).toBe(t0 + 5_000 + 300_000);
    expect(afterChallenge({ startedAt: t0, attempts: 9 }, "no answer", t0 + VERIFY_FOR_MS - 1000, random)).toMatchObject({
      verification: "failed",
      verificationNextAt: null,
    });
  });

  it("sends or holds by one rule, in TypeScript and in SQL alike", async () => {
    const db = env.SHARD_A!;
    for (const isActive of [true, false]) {
      for (const verification of VERIFICATIONS) {
        const row = await db
          .prepare(`select ${sendsSql("s")} as sends from (select ?1 as is_active, ?2 as verification) s`)
          .bind(isActive ? 1 : 0, verification)
          .first<{ sends: number }>();
        expect(Boolean(row!.sends), `${isActive} ${verification}`).toBe(sends({ isActive, verification }));
      }
    }
  });
});

describe("endpoint ownership", () => {
  it("holds a pending subscription's deliveries, numbered, with only challenges sent; once the receiver echoes, releases each once, in sequence order", async () => {
    const { client } = await requiring();
    const { subscription, box } = await subscribe(client, "none");
    expect(subscription.verification).toBe("pending");
    // Its first challenge was answered 200 without the echo: still pending, the next one scheduled.
    const [first] = await waitFor(
      () => receivedAt(box),
      (got) => got.length >= 1,
    );
    expect(isChallenge(first!)).toBe(true);
    expect(JSON.parse(first!.body)).toEqual({ type: "webhook.verification", challenge: expect.any(String) });
    // Signed and authenticated like a delivery: the kit verifies it and knows it for a challenge.
    expect(await verify({ body: first!.body, headers: first!.headers, secrets: [subscription.secret], ...HOOK_USER })).toEqual({ ok: true, reason: null });
    expect(challengeAnswer({ body: first!.body, headers: first!.headers })).toEqual({ challenge: JSON.parse(first!.body).challenge });
    expect((await record(client, subscription.id)).verification).toBe("pending");

    for (let i = 0; i < 3; i++) await makePayment(client);
    const log = await call("GET", `/v1/webhooks/${subscription.id}/deliveries/`, { headers: client.headers });
    expect(log.json.results.map((row: { status: string }) => row.status)).toEqual(["held", "held", "held"]);
    expect((await receivedAt(box)).every(isChallenge)).toBe(true);

    // The receiver now echoes; a challenge sent at once proves it.
    await mailbox({ ...HOOK_USER }, box.path);
    const verified = await call("POST", `/v1/webhooks/${subscription.id}/verify/`, { headers: client.headers });
    expect(verified.status).toBe(202);
    expect((await record(client, subscription.id)).verification).toBe("verified");
    const got = await waitFor(
      () => receivedAt(box),
      (all) => all.filter((r) => !isChallenge(r)).length >= 3,
    );
    const deliveries = got.filter((r) => !isChallenge(r));
    expect(deliveries.map((r) => Number(r.headers["hook-sequence"]))).toEqual([1, 2, 3]);
    expect(new Set(deliveries.map((r) => r.headers["webhook-id"])).size).toBe(3);
    // Verified, later changes go out as usual.
    await makePayment(client);
    await waitFor(
      () => receivedAt(box),
      (all) => all.filter((r) => !isChallenge(r)).length === 4,
    );
  });

  it("keeps a receiver that echoes the wrong challenge pending: nothing but challenges reaches it", async () => {
    const { client } = await requiring();
    const { subscription, box } = await subscribe(client, "wrong");
    await makePayment(client);
    const again = await call("POST", `/v1/webhooks/${subscription.id}/verify/`, { headers: client.headers });
    expect(again.status).toBe(202);
    expect((await record(client, subscription.id)).verification).toBe("pending");
    const got = await receivedAt(box);
    expect(got.length).toBeGreaterThanOrEqual(2);
    expect(got.every(isChallenge)).toBe(true);
    const log = await call("GET", `/v1/webhooks/${subscription.id}/deliveries/`, { headers: client.headers });
    expect(log.json.results.map((row: { status: string }) => row.status)).toEqual(["held"]);
  });

  it("holds deliveries again when the URL changes to a receiver that does not echo, and reads at most 4 KiB of an answer that never ends", async () => {
    const { client } = await requiring();
    const { subscription, box } = await subscribe(client);
    expect((await record(client, subscription.id)).verification).toBe("verified");
    await makePayment(client);
    await waitFor(
      () => receivedAt(box),
      (all) => all.some((r) => !isChallenge(r)),
    );

    const silent = await mailbox({ ...HOOK_USER, echo: "none" }, `/hooks/${unique("silent")}`);
    const moved = await call("PATCH", `/v1/webhooks/${subscription.id}/`, { body: { url: silent.url }, headers: client.headers });
    expect(moved.status).toBe(200);
    expect(moved.json.verification).toBe("pending");
    await makePayment(client);
    const log = await call("GET", `/v1/webhooks/${subscription.id}/deliveries/?status=held`, { headers: client.headers });
    expect(log.json.results).toHaveLength(1);
    expect((await receivedAt(silent)).every(isChallenge)).toBe(true);

    // A receiver whose answer never ends: read up to 4 KiB, not JSON, still pending.
    const endless = await call("PATCH", `/v1/webhooks/${subscription.id}/`, {
      body: { url: `${receiverUrl()}/endless/${unique("e")}` },
      headers: client.headers,
    });
    expect(endless.status).toBe(200);
    expect((await record(client, subscription.id)).verification).toBe("pending");
  });

  it("fails after 3 days of challenges, and starts again on verify/; an account that does not require it answers not_required and 409", async () => {
    const { client } = await requiring();
    const { subscription } = await subscribe(client, "none");
    const d1 = await shardD1(client.accountId);
    const now = Date.now();
    await d1
      .prepare("update webhook_subscriptions set verification_started_at = ?1, verification_next_at = ?2 where id = ?3")
      .bind(now - VERIFY_FOR_MS + 1000, now - 1, subscription.id)
      .run();
    const shard = (await env.DB.prepare("select shard from accounts where id = ?").bind(client.accountId).first<{ shard: string }>())!.shard;
    const settings = { encryptionKey: env.ENCRYPTION_KEY, allowLocalUrls: true };
    expect((await continueChallenges(createDb(d1), { queue: env.DELIVERIES, shard }, settings, now)).sent).toBeGreaterThanOrEqual(1);
    expect((await record(client, subscription.id)).verification).toBe("failed");
    const again = await call("POST", `/v1/webhooks/${subscription.id}/verify/`, { headers: client.headers });
    expect(again.json.verification).toBe("pending");

    const free = await makeTenant();
    const plain = await subscribe(free.client);
    expect(plain.subscription.verification).toBe("not_required");
    const refused = await call("POST", `/v1/webhooks/${plain.subscription.id}/verify/`, { headers: free.client.headers });
    expect(refused.status).toBe(409);
    expect(refused.json.detail).toMatch(/not_required/);
    expect((await call("PATCH", `/admin/accounts/${free.account.id}/`, { body: { verify_endpoints: "yes" }, headers: ADMIN })).status).toBe(400);
  });
});
