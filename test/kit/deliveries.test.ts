// The receiver's kit (packages/verify) against real deliveries: the Worker in the test pool sends
// them through the queue to the receiver on 127.0.0.1, and each is checked here as a receiver would,
// and with the published `svix` and `standardwebhooks` verifiers where they apply (v1; JSON for the latter).
import { describe, expect, it } from "vitest";
import { Webhook } from "standardwebhooks";
import { Webhook as SvixWebhook, WebhookVerificationError } from "svix";
import { parse, verify } from "../../packages/verify/index.js";
import { call, makePayment, makeTenant, shardD1, type User } from "../helpers/api";
import { HOOK_USER, receivedAt, subscribeToReceiver, waitFor, type Received } from "../helpers/webhooks";

const ALL_FLAGS = { invoice_ids: true, payment_status: true, payment_events: true, refund_reason: true, instrument_number: true };
const KINDS = {
  "JSON, every flag": { content_type: "application/json", ...ALL_FLAGS },
  "JSON, all_payment_details": { content_type: "application/json", all_payment_details: true },
  "form, every flag": { content_type: "application/x-www-form-urlencoded", ...ALL_FLAGS },
  "form, all_payment_details": { content_type: "application/x-www-form-urlencoded", all_payment_details: true },
  "Ed25519 JSON, every flag": { content_type: "application/json", signing: "ed25519", ...ALL_FLAGS },
  "Ed25519 form, all_payment_details": { content_type: "application/x-www-form-urlencoded", signing: "ed25519", all_payment_details: true },
} as const;
type Kind = keyof typeof KINDS;

interface Subscribed {
  subscription: { id: string; secret: string; public_key: string | null };
  box: Parameters<typeof receivedAt>[0];
}

/** What a receiver is given for a subscription: its secret, and an Ed25519 subscription's public key. */
const secretsOf = (subscription: Subscribed["subscription"]) => [subscription.secret, ...(subscription.public_key ? [subscription.public_key] : [])];

async function changes(client: User, processor: User) {
  const { payment } = await makePayment(client);
  const event = await call("POST", `/v2/payments/${payment.id}/events/`, {
    body: { event_code: "PU10", description: "In flight", status: "in-progress" },
    headers: processor.headers,
  });
  expect(event.status).toBe(201);
  return payment.id as string;
}

async function arrivals(box: Subscribed["box"], n: number): Promise<Received[]> {
  return waitFor(
    () => receivedAt(box),
    (all) => all.length >= n,
  );
}

describe("packages/verify on every kind of delivery the service sends", () => {
  it("verifies and parses JSON and form bodies, every flag, HMAC and Ed25519, and a test delivery; the published verifiers agree where they apply", async () => {
    const { client, processor } = await makeTenant();
    const subscribed = {} as Record<Kind, Subscribed>;
    for (const kind of Object.keys(KINDS) as Kind[]) subscribed[kind] = await subscribeToReceiver(client, KINDS[kind]);
    await changes(client, processor);
    const test = await call("POST", `/v1/webhooks/${subscribed["form, every flag"].subscription.id}/test/`, { headers: client.headers });
    expect(test.status).toBe(202);

    const got = {} as Record<Kind, Received[]>;
    for (const kind of Object.keys(KINDS) as Kind[]) got[kind] = await arrivals(subscribed[kind].box, kind === "form, every flag" ? 3 : 2);

    for (const kind of Object.keys(KINDS) as Kind[]) {
      const { subscription } = subscribed[kind];
      for (const delivery of got[kind]) {
        const input = { body: delivery.body, headers: delivery.headers, secrets: secretsOf(subscription), ...HOOK_USER };
        expect(await verify(input), kind).toEqual({ ok: true, reason: null });
        expect(delivery.verified, kind).toEqual({ basic: true, hmac: true, standard: true, kit: true });
        // Ed25519 deliveries are signed v1a only; v1 with the secret is not among them.
        const versions = delivery.headers["webhook-signature"]!.split(" ").map((token) => token.split(",")[0]);
        expect(versions, kind).toEqual(["signing" in KINDS[kind] ? "v1a" : "v1"]);
        expect(await verify({ ...input, body: `${delivery.body} ` }), kind).toMatchObject({ ok: false, reason: "signature_mismatch" });

        const parsed = parse(delivery);
        expect(parsed.id).toBe(delivery.headers["webhook-id"]);
        expect(parsed.subscription).toBe(subscription.id);
        expect(parsed.sequence).toBe(delivery.headers["hook-sequence"] === undefined ? null : Number(delivery.headers["hook-sequence"]));
        expect(parsed.paymentVersion).toBe(delivery.headers["hook-payment-version"] === undefined ? null : Number(delivery.headers["hook-payment-version"]));
        if (KINDS[kind].content_type === "application/json") expect(parsed.data).toEqual(JSON.parse(delivery.body));

        // The published verifiers check v1 only, and both parse the body as JSON once its signature
        // holds: svix (1.x, which runs on Node 20) then fails a form body with the parser's
        // SyntaxError, never its WebhookVerificationError; standardwebhooks is checked on JSON.
        if (!("signing" in KINDS[kind])) {
          const svix = () => new SvixWebhook(subscription.secret).verify(delivery.body, delivery.headers);
          if (KINDS[kind].content_type === "application/json") expect(svix).not.toThrow();
          else expect(svix).toThrow(SyntaxError);
          expect(() => new SvixWebhook(subscription.secret).verify(`${delivery.body} `, delivery.headers)).toThrow(WebhookVerificationError);
          if (KINDS[kind].content_type === "application/json")
            expect(new Webhook(subscription.secret).verify(delivery.body, delivery.headers)).toEqual(JSON.parse(delivery.body));
        }
      }
    }

    // A form body parses to exactly what the same change's JSON body says (repeated invoice_ids, JSON text, empty as null).
    const byVersion = (list: Received[]) =>
      new Map(list.filter((d) => d.headers["hook-payment-version"]).map((d) => [d.headers["hook-payment-version"], parse(d).data]));
    for (const [form, json] of [
      ["form, every flag", "JSON, every flag"],
      ["form, all_payment_details", "JSON, all_payment_details"],
      ["Ed25519 form, all_payment_details", "JSON, all_payment_details"],
    ] as const) {
      const fromForm = byVersion(got[form]);
      expect(fromForm.size).toBe(2);
      expect(fromForm).toEqual(byVersion(got[json]));
    }
    const testDelivery = got["form, every flag"].map((d) => parse(d)).find((p) => p.test);
    expect(testDelivery).toMatchObject({ test: true, sequence: null, paymentVersion: null, event: "payment.changed" });
  });

  it("verifies and parses a subscription.health delivery (another subscription's receiver answered 410)", async () => {
    const { client } = await makeTenant();
    const health = await subscribeToReceiver(client, { event: "subscription.health" });
    const gone = await subscribeToReceiver(client, { payment_status: true }, [410]);
    await makePayment(client);
    const [got] = await arrivals(health.box, 1);
    expect(await verify({ body: got!.body, headers: got!.headers, secrets: [health.subscription.secret], ...HOOK_USER })).toEqual({ ok: true, reason: null });
    expect(parse(got!)).toMatchObject({
      event: "subscription.disabled",
      subscription: health.subscription.id,
      sequence: 1,
      paymentVersion: null,
      test: false,
      data: {
        object_type: "subscription",
        object_id: gone.subscription.id,
        event: "subscription.disabled",
        reason: "gone",
        occurred_at: expect.stringMatching(/Z$/),
      },
    });
  });

  it("verifies during a rotation's 24 hours with the old or the new secret and key alone, and only with the new ones after", async () => {
    const { client, processor } = await makeTenant();
    const hmac = await subscribeToReceiver(client, { payment_status: true });
    const ed = await subscribeToReceiver(client, { payment_status: true, signing: "ed25519" });
    const old = { hmac: hmac.subscription, ed: ed.subscription };
    const rotated = {
      hmac: (await call("POST", `/v1/webhooks/${hmac.subscription.id}/rotate-secret/`, { headers: client.headers })).json,
      ed: (await call("POST", `/v1/webhooks/${ed.subscription.id}/rotate-secret/`, { headers: client.headers })).json,
    };
    expect(rotated.ed.public_key).toMatch(/^whpk_/);
    expect(rotated.ed.public_key).not.toBe(old.ed.public_key);
    const keys = await call("GET", `/v1/webhooks/${ed.subscription.id}/public-key/`, { headers: client.headers });
    expect(keys.json).toEqual({ public_key: rotated.ed.public_key, previous_public_key: old.ed.public_key, previous_expires_at: expect.stringMatching(/Z$/) });

    await makePayment(client);
    const [during] = await arrivals(hmac.box, 1);
    const [edDuring] = await arrivals(ed.box, 1);
    for (const secrets of [[old.hmac.secret], [rotated.hmac.secret], [old.hmac.secret, rotated.hmac.secret]]) {
      expect(await verify({ body: during!.body, headers: during!.headers, secrets }), secrets.join()).toEqual({ ok: true, reason: null });
    }
    for (const secrets of [[old.ed.public_key], [rotated.ed.public_key], [rotated.ed.secret, rotated.ed.public_key], [old.ed.secret, old.ed.public_key]]) {
      expect(await verify({ body: edDuring!.body, headers: edDuring!.headers, secrets }), secrets.join()).toEqual({ ok: true, reason: null });
    }

    // The 24 hours end: the previous secret and key stop signing, and the public-key endpoint stops listing it.
    await (
      await shardD1(client.accountId)
    )
      .prepare("update webhook_subscriptions set previous_secret_expires_at = ? where account_id = ?")
      .bind(Date.now() - 1000, client.accountId)
      .run();
    expect((await call("GET", `/v1/webhooks/${ed.subscription.id}/public-key/`, { headers: client.headers })).json).toEqual({
      public_key: rotated.ed.public_key,
      previous_public_key: null,
      previous_expires_at: null,
    });
    await changes(client, processor);
    const after = (await arrivals(hmac.box, 3)).at(-1)!;
    const edAfter = (await arrivals(ed.box, 3)).at(-1)!;
    expect(await verify({ body: after.body, headers: after.headers, secrets: [rotated.hmac.secret] })).toEqual({ ok: true, reason: null });
    expect(await verify({ body: after.body, headers: after.headers, secrets: [old.hmac.secret] })).toMatchObject({ ok: false, reason: "signature_mismatch" });
    expect(await verify({ body: edAfter.body, headers: edAfter.headers, secrets: [rotated.ed.public_key] })).toEqual({ ok: true, reason: null });
    expect(await verify({ body: edAfter.body, headers: edAfter.headers, secrets: [old.ed.public_key] })).toMatchObject({
      ok: false,
      reason: "signature_mismatch",
    });
    // hook-hmac keeps its meaning on an Ed25519 subscription: the HMAC with its (new) secret.
    expect(await verify({ body: edAfter.body, headers: edAfter.headers, secrets: [rotated.ed.public_key, old.ed.secret] })).toMatchObject({
      ok: false,
      reason: "hmac_mismatch",
    });
    expect(await verify({ body: edAfter.body, headers: edAfter.headers, secrets: [rotated.ed.public_key, rotated.ed.secret] })).toEqual({
      ok: true,
      reason: null,
    });
  });
});
