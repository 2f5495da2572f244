import { toBase64 } from "../../lib/encryption";

const encoder = new TextEncoder();

/** A Standard Webhooks secret: `whsec_` + base64 of 32 random bytes. */
export function newSigningSecret(): string {
  return `whsec_${toBase64(crypto.getRandomValues(new Uint8Array(32)))}`;
}

/** The key bytes of a secret: the base64-decoded text after `whsec_`. */
export function secretKeyBytes(secret: string): Uint8Array {
  const encoded = secret.startsWith("whsec_") ? secret.slice(6) : secret;
  return Uint8Array.from(atob(encoded), (ch) => ch.charCodeAt(0));
}

/** Imported signing keys, by secret, so a burst to one subscription imports its key once (non-extractable). */
const keys = new Map<string, Promise<CryptoKey>>();
const MAX_KEYS = 1000;

function signingKey(secret: string): Promise<CryptoKey> {
  let key = keys.get(secret);
  if (!key) {
    if (keys.size >= MAX_KEYS) keys.clear();
    key = crypto.subtle.importKey("raw", secretKeyBytes(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    keys.set(secret, key);
    key.catch(() => keys.delete(secret));
  }
  return key;
}

async function hmac(secret: string, message: string): Promise<string> {
  return toBase64(new Uint8Array(await crypto.subtle.sign("HMAC", await signingKey(secret), encoder.encode(message))));
}

/** `hook-hmac`: base64 HMAC-SHA256 of the exact body bytes. */
export function hookHmac(secret: string, body: string): Promise<string> {
  return hmac(secret, body);
}

/** `webhook-signature`: `v1,<sig>` per secret, space-separated, over `id.timestamp.body`. */
export async function standardSignature(secrets: string[], id: string, timestamp: number, body: string): Promise<string> {
  const signed = `${id}.${timestamp}.${body}`;
  const signatures = await Promise.all(secrets.map(async (secret) => `v1,${await hmac(secret, signed)}`));
  return signatures.join(" ");
}

export interface SigningSecrets {
  current: string;
  /** The secret before the last rotation, while its 24 hours last; null otherwise. */
  previous: string | null;
}

/**
 * Every signature header of one attempt. During a rotation's 24 hours:
 * - `webhook-signature` carries one signature per secret (Standard Webhooks' own rule);
 * - `hook-hmac` stays keyed by the previous secret, the one a receiver that has not acted on the
 *   rotation still holds, and `hook-hmac-next` carries the HMAC keyed by the new secret.
 * When the window ends, `hook-hmac` is keyed by the new secret and `hook-hmac-next` is gone. So a
 * receiver that accepts a match with either `hook-hmac` or `hook-hmac-next` keeps working
 * whenever it switches, and one that never looks at `hook-hmac-next` is never broken by a
 * rotation before the window ends.
 */
export async function signatureHeaders(secrets: SigningSecrets, deliveryId: string, timestamp: number, body: string): Promise<Record<string, string>> {
  const all = secrets.previous ? [secrets.current, secrets.previous] : [secrets.current];
  const [hmacNow, hmacNext, signature] = await Promise.all([
    hookHmac(secrets.previous ?? secrets.current, body),
    secrets.previous ? hookHmac(secrets.current, body) : null,
    standardSignature(all, deliveryId, timestamp, body),
  ]);
  return {
    "hook-hmac": hmacNow,
    ...(hmacNext ? { "hook-hmac-next": hmacNext } : {}),
    "webhook-id": deliveryId,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": signature,
  };
}
