// @payments/verify: checks and reads one webhook delivery of the Payments service. No dependencies:
// WebCrypto (globalThis.crypto.subtle), TextEncoder, atob/btoa and URLSearchParams only, so it runs
// on Node 20+, Cloudflare Workers, Deno and Bun alike.

/** Seconds a delivery's `webhook-timestamp` may differ from the receiver's clock (Standard Webhooks' default). */
export const DEFAULT_TOLERANCE_SEC = 300;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The reasons `verify()` gives, each with what it means. */
export const REASONS = {
  bad_input: "verify() was called without a body, headers or secrets it can read.",
  bad_secret: "A secret or public key given is not whsec_… (HMAC) or whpk_… (Ed25519) base64.",
  missing_header: "A header the check needs is missing.",
  bad_timestamp: "webhook-timestamp is not a whole number of seconds.",
  stale_timestamp: "webhook-timestamp is further from now than the tolerance: a replay, or a clock far off.",
  bad_credentials: "The Basic credentials are not the subscription's username and password.",
  unknown_signature_version: "webhook-signature carries no signature of a version this verifier knows (v1, v1a).",
  no_key_for_signature: "The delivery is signed with a scheme none of the secrets given is for (v1 needs whsec_…, v1a needs whpk_…).",
  signature_mismatch: "No webhook-signature matches the body with any secret given: the body, id or timestamp was changed, or the secret is wrong.",
  hmac_mismatch: "Neither hook-hmac nor hook-hmac-next matches the body with any whsec_ secret given.",
  bad_key_set: "keys is neither a JWK Set ({ keys: [...] }) nor a key set from keySetFrom(), or the set could not be fetched.",
};

/** How often a key set from a URL is fetched again at most, for a `kid` it does not have. */
export const REFETCH_AFTER_MS = 60_000;

function fromBase64url(text) {
  if (typeof text !== "string" || !/^[A-Za-z0-9_-]*$/.test(text)) return null;
  return fromBase64(text.replace(/-/g, "+").replace(/_/g, "/") + "=".repeat((4 - (text.length % 4)) % 4));
}

/** The Ed25519 keys of a JWK Set (RFC 7517), by `kid`; keys of other types are left out. */
function ed25519Jwks(set) {
  if (set === null || typeof set !== "object" || !Array.isArray(set.keys)) return null;
  return set.keys.filter((key) => key && key.kty === "OKP" && key.crv === "Ed25519" && typeof key.x === "string" && fromBase64url(key.x)?.length === 32);
}

/**
 * A JWK Set read from `url` (the subscription's `GET /v1/webhooks/{id}/jwks/`), kept in memory:
 * fetched on first use, and again, at most once every REFETCH_AFTER_MS, when a delivery names a
 * `kid` it does not have (after a rotation). A delivery whose keys it has costs no fetch. Pass it
 * to `verify()` as `keys`.
 */
export function keySetFrom(url, { fetch: fetchFn = globalThis.fetch, now = () => Date.now() } = {}) {
  let keys = null;
  let fetchedAt = -Infinity;
  let fetching = null;
  const load = async () => {
    fetchedAt = now();
    const response = await fetchFn(url, { headers: { accept: "application/jwk-set+json, application/json" } });
    if (!response.ok) throw new Error(`GET ${url} answered ${response.status}`);
    const read = ed25519Jwks(await response.json());
    if (!read) throw new Error(`GET ${url} did not answer a JWK Set`);
    keys = read;
  };
  return {
    url,
    /** The set's Ed25519 JWKs, fetched again first if one of `kids` is missing and the last fetch is a minute old. */
    async keysFor(kids) {
      const missing = keys === null || kids.some((kid) => !keys.some((key) => key.kid === kid));
      if (missing && now() - fetchedAt >= REFETCH_AFTER_MS) {
        fetching ??= load().finally(() => (fetching = null));
        await fetching.catch((error) => {
          if (keys === null) throw error;
        });
      }
      if (keys === null) throw new Error(`the key set at ${url} could not be fetched`);
      return keys;
    },
  };
}

/** The Ed25519 public keys `keys` gives for a delivery that names `kids` (all of the set's when it names none). */
async function keysOfSet(keys, kids) {
  const jwks = typeof keys?.keysFor === "function" ? await keys.keysFor(kids) : ed25519Jwks(keys);
  if (!jwks) return null;
  const named = kids.length > 0 ? jwks.filter((key) => kids.includes(key.kid)) : jwks;
  return Promise.all(named.map((key) => crypto.subtle.importKey("raw", fromBase64url(key.x), { name: "Ed25519" }, false, ["verify"])));
}

function fail(reason, detail) {
  return { ok: false, reason, detail: detail ?? REASONS[reason] };
}

/** A header by name, from a Headers object, a plain object (any case) or a list of pairs. */
function headerReader(headers) {
  if (headers === null || typeof headers !== "object") return null;
  if (typeof headers.get === "function") return (name) => headers.get(name) ?? undefined;
  const entries = Array.isArray(headers) ? headers : Object.entries(headers);
  const map = new Map();
  for (const pair of entries) {
    if (!Array.isArray(pair) || typeof pair[0] !== "string") continue;
    const value = Array.isArray(pair[1]) ? pair[1].join(", ") : pair[1];
    if (typeof value === "string") map.set(pair[0].toLowerCase(), value);
  }
  return (name) => map.get(name);
}

function bodyBytes(body) {
  if (typeof body === "string") return encoder.encode(body);
  if (body instanceof Uint8Array) return body;
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  if (ArrayBuffer.isView(body)) return new Uint8Array(body.buffer, body.byteOffset, body.byteLength);
  return null;
}

function fromBase64(text) {
  if (typeof text !== "string" || !/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 === 1) return null;
  try {
    return Uint8Array.from(atob(text), (ch) => ch.charCodeAt(0));
  } catch {
    return null;
  }
}

function toBase64(bytes) {
  let text = "";
  for (const byte of bytes) text += String.fromCharCode(byte);
  return btoa(text);
}

function concat(...parts) {
  const out = new Uint8Array(parts.reduce((n, part) => n + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/** Equal strings, in time that depends on their lengths only. */
function sameText(a, b) {
  const left = encoder.encode(a);
  const right = encoder.encode(b);
  let diff = left.length ^ right.length;
  for (let i = 0; i < Math.max(left.length, right.length); i++) diff |= (left[i] ?? 0) ^ (right[i] ?? 0);
  return diff === 0;
}

/** The keys in `secrets`: HMAC (whsec_…, or bare base64 as standardwebhooks takes it) and Ed25519 public (whpk_…). */
async function importKeys(secrets) {
  const hmac = [];
  const ed25519 = [];
  for (const secret of secrets) {
    if (typeof secret !== "string" || secret.length === 0) return null;
    if (secret.startsWith("whpk_")) {
      const raw = fromBase64(secret.slice(5));
      if (!raw || raw.length !== 32) return null;
      ed25519.push(await crypto.subtle.importKey("raw", raw, { name: "Ed25519" }, false, ["verify"]));
    } else {
      if (secret.startsWith("whsk_")) return null; // a private key: never needed to verify, never to be handed around
      const raw = fromBase64(secret.startsWith("whsec_") ? secret.slice(6) : secret);
      if (!raw || raw.length === 0) return null;
      hmac.push(await crypto.subtle.importKey("raw", raw, { name: "HMAC", hash: "SHA-256" }, false, ["verify"]));
    }
  }
  return { hmac, ed25519 };
}

/** Whether any `version,signature` of webhook-signature verifies `signed` with a key of its version. */
async function anySignature(tokens, keys, signed) {
  for (const { version, signature } of tokens) {
    const bytes = fromBase64(signature);
    if (!bytes) continue;
    const candidates = version === "v1" ? keys.hmac.map((key) => ["HMAC", key]) : keys.ed25519.map((key) => ["Ed25519", key]);
    for (const [algorithm, key] of candidates) {
      if (await crypto.subtle.verify(algorithm, key, bytes, signed)) return true;
    }
  }
  return false;
}

/**
 * Checks one delivery: every header it needs, the timestamp, the Basic credentials (when `username`
 * or `password` is given), the Standard Webhooks signature (`v1` with a whsec_ secret, `v1a` with a
 * whpk_ public key; any secret given may match, so pass the old and the new one during a
 * rotation), and `hook-hmac` / `hook-hmac-next` (when a whsec_ secret is given). JSON and form
 * bodies alike: the signatures cover the exact bytes, nothing is parsed. Never throws: answers
 * `{ ok: true, reason: null }` or `{ ok: false, reason, detail }`.
 */
export async function verify(input) {
  try {
    return await check(input);
  } catch (error) {
    return fail("bad_input", `verify() could not check this delivery: ${error instanceof Error ? error.message : String(error)}`);
  }
}

async function check(input) {
  const { body, headers, secrets, keys: keySet, username, password, toleranceSec = DEFAULT_TOLERANCE_SEC, now = Date.now() } = input ?? {};
  const bytes = bodyBytes(body);
  const header = headerReader(headers);
  const list = typeof secrets === "string" ? [secrets] : secrets === undefined && keySet !== undefined ? [] : secrets;
  if (!bytes)
    return fail("bad_input", "body must be the exact bytes received: a string, Uint8Array or ArrayBuffer (read the raw body, do not parse it first).");
  if (!header) return fail("bad_input", "headers must be the request's headers: a Headers object or a plain object.");
  if (!Array.isArray(list) || (list.length === 0 && keySet === undefined))
    return fail("bad_input", "secrets must list at least one whsec_… secret or whpk_… public key, or keys give a JWK Set.");
  if (typeof toleranceSec !== "number" || !(toleranceSec >= 0))
    return fail("bad_input", "toleranceSec must be a number of seconds, 0 or more (Infinity skips the check).");
  const keys = await importKeys(list);
  if (!keys) return fail("bad_secret");

  const id = header("webhook-id");
  const timestampText = header("webhook-timestamp");
  const signatureHeader = header("webhook-signature");
  for (const [name, value] of [
    ["webhook-id", id],
    ["webhook-timestamp", timestampText],
    ["webhook-signature", signatureHeader],
  ]) {
    if (value === undefined || value === "") return fail("missing_header", `The ${name} header is missing.`);
  }
  if (!/^\d{1,12}$/.test(timestampText)) return fail("bad_timestamp");
  const timestamp = Number(timestampText);
  const skew = Math.abs(now / 1000 - timestamp);
  if (skew > toleranceSec) return fail("stale_timestamp", `webhook-timestamp is ${Math.round(skew)} s from now; at most ${toleranceSec} s is accepted.`);

  if (username !== undefined || password !== undefined) {
    const authorization = header("authorization");
    if (authorization === undefined) return fail("missing_header", "The authorization header is missing.");
    const expected = `Basic ${toBase64(encoder.encode(`${username ?? ""}:${password ?? ""}`))}`;
    if (!sameText(authorization, expected)) return fail("bad_credentials");
  }

  const tokens = signatureHeader
    .split(" ")
    .filter(Boolean)
    .map((token) => {
      const comma = token.indexOf(",");
      return comma < 0 ? { version: "", signature: "" } : { version: token.slice(0, comma), signature: token.slice(comma + 1) };
    })
    .filter((token) => token.version === "v1" || token.version === "v1a");
  if (tokens.length === 0)
    return fail("unknown_signature_version", `webhook-signature has no v1 or v1a signature: ${JSON.stringify(signatureHeader.slice(0, 40))}.`);
  if (keySet !== undefined && tokens.some((token) => token.version === "v1a")) {
    // The keys `webhook-key-id` names (one per v1a signature), from the set: fetched again for one it lacks.
    const kids = (header("webhook-key-id") ?? "").split(" ").filter(Boolean);
    const fromSet = await keysOfSet(keySet, kids).catch((error) =>
      fail("bad_key_set", `${REASONS.bad_key_set} ${error instanceof Error ? error.message : ""}`.trim()),
    );
    if (fromSet === null) return fail("bad_key_set");
    if (!Array.isArray(fromSet)) return fromSet;
    keys.ed25519.push(...fromSet);
  }
  const usable = tokens.filter((token) => (token.version === "v1" ? keys.hmac.length > 0 : keys.ed25519.length > 0));
  if (usable.length === 0) {
    const versions = [...new Set(tokens.map((token) => token.version))].join(", ");
    return fail(
      "no_key_for_signature",
      `The delivery is signed with ${versions}; pass ${versions.includes("v1a") ? "the subscription's public key (whpk_…, GET /v1/webhooks/{id}/public-key/)" : "the subscription's secret (whsec_…)"}.`,
    );
  }
  const signed = concat(encoder.encode(`${id}.${timestampText}.`), bytes);
  if (!(await anySignature(usable, keys, signed))) return fail("signature_mismatch");

  if (keys.hmac.length > 0) {
    const hmacs = [header("hook-hmac"), header("hook-hmac-next")].filter((value) => value !== undefined);
    if (hmacs.length === 0) return fail("missing_header", "The hook-hmac header is missing.");
    let matched = false;
    for (const value of hmacs) {
      const signature = fromBase64(value);
      for (const key of signature ? keys.hmac : []) if (await crypto.subtle.verify("HMAC", key, signature, bytes)) matched = true;
    }
    if (!matched) return fail("hmac_mismatch");
  }
  return { ok: true, reason: null };
}

/** A delivery that `parse()` cannot read. */
export class ParseError extends Error {
  constructor(message) {
    super(message);
    this.name = "ParseError";
  }
}

/** Form keys that repeat (an array of strings), and those that carry JSON text. */
const FORM_LISTS = new Set(["invoice_ids"]);
const FORM_JSON = new Set(["payment_events", "object"]);
const FORM_NULLABLE = new Set(["refund_reason", "instrument_number"]);

function parseForm(text) {
  const out = {};
  for (const [key, value] of new URLSearchParams(text)) {
    if (FORM_LISTS.has(key)) {
      (out[key] ??= []).push(value);
      continue;
    }
    if (Object.hasOwn(out, key)) throw new ParseError(`The form body repeats the key "${key}", which holds one value.`);
    if (FORM_JSON.has(key)) {
      try {
        out[key] = JSON.parse(value);
      } catch {
        throw new ParseError(`The form field "${key}" is not JSON text.`);
      }
    } else if (FORM_NULLABLE.has(key)) out[key] = value === "" ? null : value;
    else if (key === "test") out[key] = value === "true";
    else out[key] = value;
  }
  return out;
}

function wholeOrNull(text) {
  return text !== undefined && /^\d+$/.test(text) ? Number(text) : null;
}

/**
 * Reads a delivery (verify it first): its body as the object it encodes, JSON or form
 * (`invoice_ids` repeated into a list, `payment_events` and `object` from their JSON text, an
 * empty `refund_reason` or `instrument_number` as null), and what its headers say. Throws
 * `ParseError` on a body that is neither.
 */
/** The W3C trace of a `traceparent` (version 00's form: four fields, lower-case hex), or null. */
function traceOf(traceparent, tracestate) {
  const match = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/.exec((traceparent ?? "").trim());
  if (!match || match[1] === "ff" || /^0+$/.test(match[2]) || /^0+$/.test(match[3])) return null;
  return { traceId: match[2], spanId: match[3], flags: match[4], traceparent: match[0], tracestate: tracestate ?? null };
}

export function parse({ body, headers }) {
  const bytes = bodyBytes(body);
  const header = headerReader(headers) ?? (() => undefined);
  if (!bytes) throw new ParseError("body must be a string, Uint8Array or ArrayBuffer.");
  const text = decoder.decode(bytes);
  const contentType = (header("content-type") ?? "application/json").split(";")[0].trim().toLowerCase();
  let data;
  if (contentType === "application/x-www-form-urlencoded") data = parseForm(text);
  else {
    try {
      data = JSON.parse(text);
    } catch {
      throw new ParseError("The body is not JSON.");
    }
  }
  if (data === null || typeof data !== "object" || Array.isArray(data) || typeof data.event !== "string" || typeof data.object_id !== "string") {
    throw new ParseError("The body is not a delivery: it needs object_type, object_id and event.");
  }
  return {
    id: header("webhook-id") ?? header("hook-delivery") ?? null,
    subscription: header("hook-subscription") ?? null,
    event: data.event,
    sequence: wholeOrNull(header("hook-sequence")),
    paymentVersion: wholeOrNull(header("hook-payment-version")),
    timestamp: wholeOrNull(header("webhook-timestamp")),
    trace: traceOf(header("traceparent"), header("tracestate")),
    test: data.test === true,
    contentType,
    data,
  };
}

/** The `type` of an endpoint-ownership challenge, and its `hook-event`. */
export const CHALLENGE_TYPE = "webhook.verification";

/**
 * The answer to an endpoint-ownership challenge: `{ challenge }` (the one sent) to send back as
 * JSON with a 2xx, within 10 s; null when the delivery is not a challenge. Verify it first: only
 * the service signs it.
 */
export function challengeAnswer({ body, headers }) {
  const header = headerReader(headers);
  const bytes = bodyBytes(body);
  if (!header || !bytes || header("hook-event") !== CHALLENGE_TYPE) return null;
  try {
    const sent = JSON.parse(decoder.decode(bytes));
    return sent?.type === CHALLENGE_TYPE && typeof sent.challenge === "string" ? { challenge: sent.challenge } : null;
  } catch {
    return null;
  }
}
