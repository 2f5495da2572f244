// The receiver's verifying mode (plain Node): checks every delivery with the receiver's kit
// (packages/verify), and beside it with independent oracles (node:crypto, the published
// `standardwebhooks` verifier), prints it, and answers 200 (or scripted statuses).
// `npm run receiver` and the tests' mailboxes use it.
import { createHmac, createPublicKey, timingSafeEqual, verify as cryptoVerify } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { challengeAnswer, verify } from "../../packages/verify/index.js";

const equal = (a, b) => {
  const left = Buffer.from(String(a));
  const right = Buffer.from(String(b));
  return left.length === right.length && timingSafeEqual(left, right);
};

/** Standard Webhooks `v1a` with node:crypto: the Ed25519 public key `whpk_…` over `id.timestamp.body`. */
function ed25519Verifies(publicKey, headers, body) {
  const key = createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: Buffer.from(publicKey.slice(5), "base64").toString("base64url") }, format: "jwk" });
  const signed = Buffer.from(`${headers["webhook-id"]}.${headers["webhook-timestamp"]}.${body}`);
  const fresh = Math.abs(Date.now() / 1000 - Number(headers["webhook-timestamp"])) <= 5 * 60;
  return (
    fresh &&
    (headers["webhook-signature"] ?? "")
      .split(" ")
      .some((token) => token.startsWith("v1a,") && cryptoVerify(null, signed, key, Buffer.from(token.slice(4), "base64")))
  );
}

/**
 * What a receiver should check of one delivery; every field true means it is genuine. `kit` is the
 * receiver's kit's answer (packages/verify); `basic`, `hmac` and `standard` are the same checks
 * made without it, so that the kit is checked on every delivery the tests receive.
 */
export async function verifyDelivery({ headers, body, secret, publicKey, username, password }) {
  const keyBytes = Buffer.from(secret.replace(/^whsec_/, ""), "base64");
  const basic = equal(headers.authorization ?? "", `Basic ${Buffer.from(`${username}:${password}`).toString("base64")}`);
  // During a secret rotation's 24 hours, hook-hmac is keyed by the old secret and hook-hmac-next by
  // the new one: accept either, and this check works before and after you switch secrets.
  const expectedHmac = createHmac("sha256", keyBytes).update(body).digest("base64");
  const hmac = [headers["hook-hmac"], headers["hook-hmac-next"]].some((value) => value !== undefined && equal(value, expectedHmac));
  const standardHeaders = {
    "webhook-id": headers["webhook-id"],
    "webhook-timestamp": headers["webhook-timestamp"],
    "webhook-signature": headers["webhook-signature"],
  };
  let standard = false;
  const webhook = new Webhook(secret);
  if (publicKey) {
    standard = ed25519Verifies(publicKey, standardHeaders, body); // standardwebhooks checks v1 only
  } else if (/json/i.test(headers["content-type"] ?? "")) {
    try {
      webhook.verify(body, standardHeaders); // the published verifier: signature, timestamp, then JSON.parse
      standard = true;
    } catch {
      standard = false;
    }
  } else {
    // verify() ends by JSON-parsing the body, so a form body is checked with the library's sign().
    const timestamp = Number(standardHeaders["webhook-timestamp"]);
    const fresh = Math.abs(Date.now() / 1000 - timestamp) <= 5 * 60;
    const expected = webhook.sign(standardHeaders["webhook-id"] ?? "", new Date(timestamp * 1000), body);
    standard = fresh && (standardHeaders["webhook-signature"] ?? "").split(" ").some((signature) => equal(signature, expected));
  }
  const kit = await verify({ body, headers, secrets: publicKey ? [secret, publicKey] : [secret], username, password });
  return { basic, hmac, standard, kit: kit.ok };
}

/**
 * The verifying mode: POST /_config/<path> sets the secret (and an Ed25519 subscription's
 * `publicKey`), credentials, a list of statuses to answer, a `delayMs`, and `failing`: a text
 * whose deliveries (those whose body contains it) are answered 503 with `Retry-After: 5` until the
 * path is configured again, for deliveries to <path>; GET /_received/<path> lists what arrived
 * there, with the status answered and when; any other POST is a delivery, checked against its path's
 * settings (or `defaults`) and printed. An endpoint-ownership challenge that verifies is answered
 * with its challenge (`echo`: "none" or "wrong" in the config, for tests, answers without it or
 * with another).
 */
export function verifyMode({ defaults = null, quiet = false } = {}) {
  const configs = new Map();
  const received = new Map();
  async function handle(req, res, body, url) {
    const reply = (status, payload) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(payload));
    };
    if (url.pathname.startsWith("/_config/") && req.method === "POST") {
      configs.set(url.pathname.slice("/_config".length), JSON.parse(body));
      return reply(200, { ok: true });
    }
    if (url.pathname.startsWith("/_received/") && req.method === "GET") {
      return reply(200, received.get(url.pathname.slice("/_received".length)) ?? []);
    }
    if (req.method !== "POST") return reply(405, { detail: "POST deliveries here." });
    const config = configs.get(url.pathname) ?? defaults;
    const receivedAt = Date.now();
    const failing = typeof config?.failing === "string" && body.includes(config.failing);
    const scripted = failing ? 503 : config?.responses?.shift();
    const verified = config?.secret ? await verifyDelivery({ headers: req.headers, body, ...config }) : null;
    const list = received.get(url.pathname) ?? [];
    const status = scripted ?? (verified && !Object.values(verified).every(Boolean) ? 401 : 200);
    const entry = { path: url.pathname, headers: req.headers, body, verified, received_at: receivedAt, status, answered_at: null };
    list.push(entry);
    received.set(url.pathname, list);
    if (!quiet) {
      const ok = verified
        ? Object.entries(verified)
            .map(([k, v]) => `${k} ${v ? "ok" : "FAILED"}`)
            .join(", ")
        : "not verified (no secret set)";
      console.log(`${new Date().toISOString()} ${req.headers["hook-event"] ?? "?"} delivery ${req.headers["hook-delivery"] ?? "?"} -> ${status} (${ok})`);
      console.log(`  ${req.headers["content-type"]}: ${body.length > 400 ? `${body.slice(0, 400)}…` : body}`);
    }
    // `delayMs` in a mailbox's config: a slow receiver, answering that much later.
    if (failing) res.setHeader("retry-after", "5");
    // An endpoint-ownership challenge is answered as the kit answers it (`echo` in the config: "none"
    // answers 200 without it, "wrong" with another challenge).
    const challenge = status === 200 ? challengeAnswer({ body, headers: req.headers }) : null;
    const answer = !challenge || config?.echo === "none" ? { received: true } : config?.echo === "wrong" ? { challenge: "not-the-one-sent" } : challenge;
    setTimeout(() => {
      entry.answered_at = Date.now();
      reply(status, answer);
    }, config?.delayMs ?? 0);
  }
  return { handle, configs, received };
}
