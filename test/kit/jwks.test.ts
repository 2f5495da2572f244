// Key discovery (docs/interface.md, "Key discovery"): an `ed25519` subscription's keys as a JWK Set
// with no credentials, `webhook-key-id` on each delivery, and the kit verifying from the set's URL
// alone across a rotation.
import { describe, expect, it } from "vitest";
import { keySetFrom, verify } from "../../packages/verify/index.js";
import { kidOf } from "../../src/webhooks/wire/jwk";
import { base64, fromBase64url } from "../../src/lib/crypto";
import { ADMIN, call, makePayment, makeTenant, shardD1 } from "../helpers/api";
import { receivedAt, subscribeToReceiver, waitFor, type Received } from "../helpers/webhooks";

const arrivals = (box: Parameters<typeof receivedAt>[0], n: number): Promise<Received[]> =>
  waitFor(
    () => receivedAt(box),
    (all) => all.length >= n,
  );

/** A fetch that asks the Worker in the test pool, counting its calls, and a clock the test moves. */
function receiverSide() {
  const fetched: string[] = [];
  let clock = Date.now();
  const fetchFn = async (url: string) => {
    fetched.push(url);
    const res = await call("GET", new URL(url).pathname);
    return new Response(JSON.stringify(res.json), { status: res.status, headers: res.headers });
  };
  return { fetched, fetch: fetchFn as unknown as typeof fetch, now: () => clock, advance: (ms: number) => (clock += ms) };
}

describe("key discovery", () => {
  it("names each key by its RFC 7638 thumbprint (RFC 8037's example key)", async () => {
    // RFC 8037, appendix A.3: the thumbprint of the Ed25519 key of appendix A.2.
    const x = "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo";
    expect(await kidOf(`whpk_${base64(fromBase64url(x))}`)).toBe("kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k");
  });

  it("answers an ed25519 subscription's JWK Set with no credentials, cacheable, 304 on its ETag; 404 for hmac, unknown, deleted and erased", async () => {
    const { client, account } = await makeTenant();
    const { subscription } = await subscribeToReceiver(client, { signing: "ed25519" });
    const path = `/v1/webhooks/${subscription.id}/jwks/`;
    const res = await call("GET", path);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/jwk-set+json");
    expect(res.headers.get("cache-control")).toBe("public, max-age=300");
    const kid = await kidOf(subscription.public_key);
    expect(res.json).toEqual({ keys: [{ kty: "OKP", crv: "Ed25519", x: expect.any(String), kid, use: "sig", alg: "EdDSA" }] });
    expect(`whpk_${base64(fromBase64url(res.json.keys[0].x))}`).toBe(subscription.public_key);
    const etag = res.headers.get("etag")!;
    expect(etag).toMatch(/^"[0-9a-f]{32}"$/);
    const again = await call("GET", path, { headers: { "if-none-match": etag } });
    expect(again.status).toBe(304);
    expect(again.headers.get("etag")).toBe(etag);

    // A rotation lists both keys for its 24 hours, the new one first: the set (and its ETag) changes.
    const rotated = (await call("POST", `/v1/webhooks/${subscription.id}/rotate-secret/`, { headers: client.headers })).json;
    const during = await call("GET", path, { headers: { "if-none-match": etag } });
    expect(during.status).toBe(200);
    expect(during.json.keys.map((key: { kid: string }) => key.kid)).toEqual([await kidOf(rotated.public_key), kid]);

    const hmac = await subscribeToReceiver(client);
    expect((await call("GET", `/v1/webhooks/${hmac.subscription.id}/jwks/`)).status).toBe(404);
    expect((await call("GET", `/v1/webhooks/${crypto.randomUUID()}/jwks/`)).status).toBe(404);
    const long = await call("GET", `/v1/webhooks/${"x".repeat(10_000)}/jwks/`);
    expect(long.status).toBe(404);
    expect(long.json).toEqual({ detail: expect.any(String) });

    const other = await subscribeToReceiver(client, { signing: "ed25519" });
    expect((await call("DELETE", `/v1/webhooks/${other.subscription.id}/`, { headers: client.headers })).status).toBe(204);
    expect((await call("GET", `/v1/webhooks/${other.subscription.id}/jwks/`)).status).toBe(404);
    expect((await call("DELETE", `/admin/accounts/${account.id}/`, { headers: ADMIN })).status).toBe(202);
    expect((await call("GET", path)).status).toBe(404);
  });

  it("lets a receiver given only the JWK Set URL verify every delivery across a rotate-secret, fetching again only for a kid it lacks, once a minute at most", async () => {
    const { client } = await makeTenant();
    const { subscription, box } = await subscribeToReceiver(client, { payment_status: true, signing: "ed25519" });
    const side = receiverSide();
    const keys = keySetFrom(`https://payments.test/v1/webhooks/${subscription.id}/jwks/`, { fetch: side.fetch, now: side.now });
    const check = (delivery: Received) => verify({ body: delivery.body, headers: delivery.headers, keys, now: Date.now() });

    await makePayment(client);
    const [first] = await arrivals(box, 1);
    expect(first!.headers["webhook-key-id"]).toBe(await kidOf(subscription.public_key));
    expect(await check(first!)).toEqual({ ok: true, reason: null });
    expect(side.fetched).toHaveLength(1);
    await makePayment(client);
    expect(await check((await arrivals(box, 2))[1]!)).toEqual({ ok: true, reason: null });
    expect(side.fetched).toHaveLength(1); // its key is known: no fetch

    const rotated = (await call("POST", `/v1/webhooks/${subscription.id}/rotate-secret/`, { headers: client.headers })).json;
    await makePayment(client);
    const during = (await arrivals(box, 3))[2]!;
    const kids = [await kidOf(rotated.public_key), await kidOf(subscription.public_key)];
    expect(during.headers["webhook-key-id"]).toBe(kids.join(" "));
    expect(during.headers["webhook-signature"]!.split(" ").map((token) => token.split(",")[0])).toEqual(["v1a", "v1a"]);
    // The new kid is unknown, but the set was read less than a minute ago: the old key's signature verifies it.
    expect(await check(during)).toEqual({ ok: true, reason: null });
    expect(side.fetched).toHaveLength(1);
    side.advance(61_000);
    expect(await check(during)).toEqual({ ok: true, reason: null });
    expect(side.fetched).toHaveLength(2); // read again for the new kid

    // The 24 hours end: only the new key signs, and the receiver already has it.
    await (
      await shardD1(client.accountId)
    )
      .prepare("update webhook_subscriptions set previous_secret_expires_at = ? where id = ?")
      .bind(Date.now() - 1000, subscription.id)
      .run();
    await makePayment(client);
    const after = (await arrivals(box, 4))[3]!;
    expect(after.headers["webhook-key-id"]).toBe(kids[0]);
    expect(await check(after)).toEqual({ ok: true, reason: null });
    expect(side.fetched).toHaveLength(2);
    // A body changed on the way fails, as with a key given directly.
    expect(await verify({ body: `${after.body} `, headers: after.headers, keys, now: Date.now() })).toMatchObject({ ok: false, reason: "signature_mismatch" });
  });

  it("refuses what is not a key set, and a set it cannot fetch, with a reason", async () => {
    const { client } = await makeTenant();
    const { subscription, box } = await subscribeToReceiver(client, { signing: "ed25519" });
    await makePayment(client);
    const [delivery] = await arrivals(box, 1);
    const base = { body: delivery!.body, headers: delivery!.headers, now: Date.now() };
    expect(await verify({ ...base, keys: { nothing: true } as never })).toMatchObject({ ok: false, reason: "bad_key_set" });
    const down = keySetFrom(`https://payments.test/v1/webhooks/${subscription.id}/jwks/`, {
      fetch: (async () => new Response("no", { status: 503 })) as unknown as typeof fetch,
    });
    expect(await verify({ ...base, keys: down })).toMatchObject({ ok: false, reason: "bad_key_set" });
    // A set without the delivery's keys: nothing to verify it with.
    expect(await verify({ ...base, keys: { keys: [] } })).toMatchObject({ ok: false, reason: "no_key_for_signature" });
  });
});
