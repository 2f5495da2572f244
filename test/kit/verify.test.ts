// packages/verify on bad input: every case answers which check failed, and none throws.
import { describe, expect, it } from "vitest";
import { parse, ParseError, verify, type VerifyInput } from "../../packages/verify/index.js";
import { basicAuthorization } from "../../src/lib/crypto";
import { newSigningKeyPair, newSigningSecret, signatureHeaders } from "../../src/webhooks/wire/signing";

const SECRET = newSigningSecret();
const PAIR = await newSigningKeyPair();
const USER = { username: "hook-user", password: "hook-pass-123" };
const NOW = Date.now();
const TIMESTAMP = Math.floor(NOW / 1000);
const JSON_BODY = '{"object_type":"payment","object_id":"pmt_1","event":"payment.changed","payment_status":"pending"}';
const FORM_BODY = "object_type=payment&object_id=pmt_1&event=payment.changed&invoice_ids=inv_a&invoice_ids=inv_b&refund_reason=&payment_events=%5B%5D";

async function signed(body: string, { ed25519 = false, contentType = "application/json" } = {}): Promise<VerifyInput> {
  const secrets = { current: SECRET, previous: null, ed25519: ed25519 ? { current: PAIR.signingKey, previous: null } : null };
  const headers = {
    authorization: basicAuthorization(USER.username, USER.password),
    "content-type": contentType,
    ...(await signatureHeaders(secrets, "d-1", TIMESTAMP, body)),
  };
  return { body, headers, secrets: ed25519 ? [SECRET, PAIR.publicKey] : [SECRET], ...USER, now: NOW };
}

const without = (headers: unknown, name: string) => Object.fromEntries(Object.entries(headers as Record<string, string>).filter(([key]) => key !== name));
const withHeader = (input: VerifyInput, name: string, value: string) => ({
  ...input,
  headers: { ...(input.headers as Record<string, string>), [name]: value },
});

const CASES: [string, (input: VerifyInput) => unknown, string | null][] = [
  ["a genuine delivery", (i) => i, null],
  ["its body as bytes", (i) => ({ ...i, body: new TextEncoder().encode(i.body as string) }), null],
  ["its headers as a Headers object", (i) => ({ ...i, headers: new Headers(i.headers as Record<string, string>) }), null],
  ["header names in other cases", (i) => ({ ...i, headers: Object.fromEntries(Object.entries(i.headers).map(([k, v]) => [k.toUpperCase(), v])) }), null],
  ["no credentials asked for", (i) => ({ ...i, username: undefined, password: undefined }), null],
  ["a tampered body", (i) => ({ ...i, body: `${i.body as string} ` }), "signature_mismatch"],
  ["a wrong secret", (i) => ({ ...i, secrets: [newSigningSecret()] }), "signature_mismatch"],
  ["a changed webhook-id", (i) => withHeader(i, "webhook-id", "d-2"), "signature_mismatch"],
  ["a signature that is not base64", (i) => withHeader(i, "webhook-signature", "v1,@@@"), "signature_mismatch"],
  ["a stale timestamp", (i) => ({ ...i, now: NOW + 301_000 }), "stale_timestamp"],
  ["a timestamp from the future", (i) => ({ ...i, now: NOW - 301_000 }), "stale_timestamp"],
  ["a stale timestamp, tolerance Infinity", (i) => ({ ...i, now: NOW + 86_400_000, toleranceSec: Infinity }), null],
  ["a timestamp that is not a number", (i) => withHeader(i, "webhook-timestamp", "yesterday"), "bad_timestamp"],
  ["no webhook-id", (i) => ({ ...i, headers: without(i.headers, "webhook-id") }), "missing_header"],
  ["no webhook-timestamp", (i) => ({ ...i, headers: without(i.headers, "webhook-timestamp") }), "missing_header"],
  ["no webhook-signature", (i) => ({ ...i, headers: without(i.headers, "webhook-signature") }), "missing_header"],
  ["no hook-hmac", (i) => ({ ...i, headers: without(i.headers, "hook-hmac") }), "missing_header"],
  ["no authorization", (i) => ({ ...i, headers: without(i.headers, "authorization") }), "missing_header"],
  ["a wrong password", (i) => ({ ...i, password: "nope" }), "bad_credentials"],
  ["a wrong hook-hmac", (i) => withHeader(i, "hook-hmac", btoa("x".repeat(32))), "hmac_mismatch"],
  ["an unknown signature version", (i) => withHeader(i, "webhook-signature", "v9,abc"), "unknown_signature_version"],
  ["a signature without a version", (i) => withHeader(i, "webhook-signature", "abc"), "unknown_signature_version"],
  ["no secrets", (i) => ({ ...i, secrets: [] }), "bad_input"],
  ["secrets that are not a list", (i) => ({ ...i, secrets: 42 }), "bad_input"],
  ["a private key among the secrets", (i) => ({ ...i, secrets: [PAIR.signingKey] }), "bad_secret"],
  ["a secret that is not base64", (i) => ({ ...i, secrets: ["whsec_not base64!"] }), "bad_secret"],
  ["a public key of the wrong length", (i) => ({ ...i, secrets: ["whpk_AAAA"] }), "bad_secret"],
  ["no body", (i) => ({ ...i, body: undefined }), "bad_input"],
  ["a parsed body", (i) => ({ ...i, body: { object_id: "pmt_1" } }), "bad_input"],
  ["no headers", (i) => ({ ...i, headers: null }), "bad_input"],
  ["a negative tolerance", (i) => ({ ...i, toleranceSec: -1 }), "bad_input"],
  ["nothing at all", () => undefined, "bad_input"],
  ["a string instead of an object", () => "delivery", "bad_input"],
];

describe("verify(): which check failed, never a throw", () => {
  it.each(CASES)("JSON body, %s", async (_name, change, reason) => {
    const result = await verify(change(await signed(JSON_BODY)) as VerifyInput);
    expect(result).toMatchObject(reason === null ? { ok: true, reason: null } : { ok: false, reason, detail: expect.any(String) });
  });

  it.each(CASES)("form body with repeated keys, %s", async (_name, change, reason) => {
    const result = await verify(change(await signed(FORM_BODY, { contentType: "application/x-www-form-urlencoded" })) as VerifyInput);
    expect(result).toMatchObject(reason === null ? { ok: true, reason: null } : { ok: false, reason });
  });

  it.each(CASES.filter(([name]) => !/hook-hmac|a wrong secret/.test(name)))("Ed25519 (v1a), %s", async (_name, change, reason) => {
    const result = await verify(change(await signed(JSON_BODY, { ed25519: true })) as VerifyInput);
    expect(result).toMatchObject(reason === null ? { ok: true, reason: null } : { ok: false, reason });
  });

  it("says which key a v1a delivery needs when given only the HMAC secret, and a v1 one when given only a public key", async () => {
    const ed = await signed(JSON_BODY, { ed25519: true });
    expect(await verify({ ...ed, secrets: [SECRET] })).toMatchObject({ ok: false, reason: "no_key_for_signature", detail: expect.stringContaining("whpk_") });
    const hmac = await signed(JSON_BODY);
    expect(await verify({ ...hmac, secrets: [PAIR.publicKey] })).toMatchObject({
      ok: false,
      reason: "no_key_for_signature",
      detail: expect.stringContaining("whsec_"),
    });
    expect(await verify({ ...ed, secrets: [(await newSigningKeyPair()).publicKey] })).toMatchObject({ ok: false, reason: "signature_mismatch" });
  });
});

describe("parse()", () => {
  it("reads a form body: repeated keys into a list, JSON text, empty as null", async () => {
    const input = await signed(FORM_BODY, { contentType: "application/x-www-form-urlencoded" });
    expect(parse(input)).toEqual({
      id: "d-1",
      subscription: null,
      event: "payment.changed",
      sequence: null,
      paymentVersion: null,
      timestamp: TIMESTAMP,
      trace: null,
      test: false,
      contentType: "application/x-www-form-urlencoded",
      data: { object_type: "payment", object_id: "pmt_1", event: "payment.changed", invoice_ids: ["inv_a", "inv_b"], refund_reason: null, payment_events: [] },
    });
  });

  it.each([
    [
      "a delivery's trace",
      "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
      "congo=1",
      { traceId: "4bf92f3577b34da6a3ce929d0e0e4736", spanId: "00f067aa0ba902b7", flags: "01" },
    ],
    ["none", undefined, undefined, null],
    ["an invalid one", "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", undefined, null],
    ["ids of zeros", "00-00000000000000000000000000000000-00f067aa0ba902b7-01", undefined, null],
  ])("reads %s from traceparent and tracestate", async (_name, traceparent, tracestate, expected) => {
    const input = await signed('{"object_type":"payment","object_id":"pmt_1","event":"payment.changed"}');
    const headers = { ...(input.headers as Record<string, string>), ...(traceparent ? { traceparent } : {}), ...(tracestate ? { tracestate } : {}) };
    const { trace } = parse({ body: input.body, headers });
    expect(trace === null ? null : { traceId: trace.traceId, spanId: trace.spanId, flags: trace.flags }).toEqual(expected);
    if (trace) expect(trace.tracestate).toBe(tracestate ?? null);
  });

  it.each([
    [
      "a form body that repeats a key holding one value",
      "object_type=payment&object_id=p&event=payment.changed&payment_status=a&payment_status=b",
      "application/x-www-form-urlencoded",
      /repeats the key "payment_status"/,
    ],
    [
      "a form field that should be JSON",
      "object_type=payment&object_id=p&event=payment.changed&object=%7B",
      "application/x-www-form-urlencoded",
      /"object" is not JSON/,
    ],
    ["a JSON body that is not JSON", "{", "application/json", /not JSON/],
    ["a JSON body that is not a delivery", "[1,2]", "application/json", /not a delivery/],
  ])("throws ParseError on %s", (_name, body, contentType, message) => {
    expect(() => parse({ body, headers: { "content-type": contentType } })).toThrow(ParseError);
    expect(() => parse({ body, headers: { "content-type": contentType } })).toThrow(message);
  });
});
