// Ed25519 subscriptions (docs/interface.md, "Signing schemes") and the feed's signed headers, as the API shows them.
import { describe, expect, it } from "vitest";
import { verify } from "../../packages/verify/index.js";
import { call, makePayment, makeTenant, shardD1 } from "../helpers/api";
import { HOOK_USER, receivedAt, receiverUrl, subscribeToReceiver, waitFor } from "../helpers/webhooks";

const fields = () => ({ event: "payment.changed", url: `${receiverUrl()}/hooks/${crypto.randomUUID()}`, content_type: "application/json", ...HOOK_USER });

describe("signing: ed25519", () => {
  it("makes a key pair: the record shows the public key, the endpoint gives it, the private key is stored sealed", async () => {
    const { client } = await makeTenant();
    const res = await call("POST", "/v1/webhooks/", { body: { ...fields(), signing: "ed25519" }, headers: client.headers });
    expect(res.status).toBe(201);
    expect(res.json).toMatchObject({
      signing: "ed25519",
      public_key: expect.stringMatching(/^whpk_[A-Za-z0-9+/]{43}=$/),
      secret: expect.stringMatching(/^whsec_/),
    });
    const keys = await call("GET", `/v1/webhooks/${res.json.id}/public-key/`, { headers: client.headers });
    expect(keys).toMatchObject({ status: 200, json: { public_key: res.json.public_key, previous_public_key: null, previous_expires_at: null } });
    const row = await (
      await shardD1(client.accountId)
    )
      .prepare("select signing_key, public_key from webhook_subscriptions where id = ?")
      .bind(res.json.id)
      .first<Record<string, string>>();
    expect(row!.public_key).toBe(res.json.public_key);
    expect(row!.signing_key).toMatch(/^v2\./); // sealed with ENCRYPTION_KEY
    expect(JSON.stringify(res.json)).not.toContain("whsk_");
  });

  it("answers 404 for an hmac subscription's public key, and for another account's", async () => {
    const { client } = await makeTenant();
    const other = await makeTenant();
    const hmac = await call("POST", "/v1/webhooks/", { body: fields(), headers: client.headers });
    expect(hmac.json).toMatchObject({ signing: "hmac", public_key: null });
    expect(await call("GET", `/v1/webhooks/${hmac.json.id}/public-key/`, { headers: client.headers })).toMatchObject({
      status: 404,
      json: { detail: expect.stringContaining("signs with HMAC") },
    });
    const ed = await call("POST", "/v1/webhooks/", { body: { ...fields(), signing: "ed25519" }, headers: client.headers });
    expect(await call("GET", `/v1/webhooks/${ed.json.id}/public-key/`, { headers: other.client.headers })).toMatchObject({
      status: 404,
      json: { detail: "Not found." },
    });
  });

  it("is chosen at creation: a bad value is 400, PUT or PATCH may repeat it but not change it", async () => {
    const { client } = await makeTenant();
    expect(await call("POST", "/v1/webhooks/", { body: { ...fields(), signing: "rsa" }, headers: client.headers })).toMatchObject({
      status: 400,
      json: { signing: ['"rsa" is not a valid choice.'] },
    });
    const ed = await call("POST", "/v1/webhooks/", { body: { ...fields(), signing: "ed25519" }, headers: client.headers });
    const patched = await call("PATCH", `/v1/webhooks/${ed.json.id}/`, { body: { signing: "hmac" }, headers: client.headers });
    expect(patched).toMatchObject({ status: 400, json: { signing: [expect.stringContaining("chosen when a subscription is made")] } });
    const put = await call("PUT", `/v1/webhooks/${ed.json.id}/`, { body: { ...fields(), signing: "ed25519", payment_status: true }, headers: client.headers });
    expect(put).toMatchObject({ status: 200, json: { signing: "ed25519", public_key: ed.json.public_key, payment_status: true } });
    const putWithout = await call("PUT", `/v1/webhooks/${ed.json.id}/`, { body: fields(), headers: client.headers });
    expect(putWithout).toMatchObject({ status: 200, json: { signing: "ed25519", public_key: ed.json.public_key } });
  });
});

describe("the feed with signed=true", () => {
  it("gives each delivery the headers it would be pushed with, signed now, and a cursor just after it", async () => {
    const { client } = await makeTenant();
    for (const signing of ["hmac", "ed25519"]) {
      const { subscription, box } = await subscribeToReceiver(client, { payment_status: true, signing });
      await makePayment(client);
      await makePayment(client);
      const pushed = await waitFor(
        () => receivedAt(box),
        (list) => list.length === 2,
      );
      const page = await call("GET", `/v1/webhooks/${subscription.id}/feed/?signed=true`, { headers: client.headers });
      expect(page.status).toBe(200);
      const secrets = [subscription.secret, ...(subscription.public_key ? [subscription.public_key] : [])];
      for (const item of page.json.results) {
        expect(await verify({ body: item.body, headers: item.headers, secrets, ...HOOK_USER })).toEqual({ ok: true, reason: null });
        const sent = pushed.find((got) => got.headers["hook-delivery"] === item.delivery_id)!;
        for (const name of [
          "content-type",
          "hook-subscription",
          "hook-delivery",
          "hook-event",
          "hook-sequence",
          "hook-payment-version",
          "authorization",
          "webhook-id",
        ]) {
          expect(item.headers[name], name).toBe(sent.headers[name]);
        }
      }
      // Acking one item's cursor reads on from just after it.
      await call("POST", `/v1/webhooks/${subscription.id}/feed/ack/`, { body: { cursor: page.json.results[0].cursor }, headers: client.headers });
      const rest = await call("GET", `/v1/webhooks/${subscription.id}/feed/?after=acked`, { headers: client.headers });
      expect(rest.json.results.map((item: { sequence: number }) => item.sequence)).toEqual([2]);
      expect(rest.json.results[0].headers).toBeUndefined();
      expect(page.json.next).toBe(page.json.results[1].cursor);
    }
    expect((await call("GET", `/v1/webhooks/${crypto.randomUUID()}/feed/?signed=maybe`, { headers: client.headers })).status).toBe(400);
  });
});
