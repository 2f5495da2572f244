import { base64, fromBase64 } from "../../lib/crypto";
import { kidOf } from "./jwk";

const encoder = new TextEncoder();

/** A Standard Webhooks secret: `whsec_` + base64 of 32 random bytes. */
export function newSigningSecret(): string {
  return `whsec_${base64(crypto.getRandomValues(new Uint8Array(32)))}`;
}

/** The key bytes of a secret: the base64-decoded text after `whsec_`. */
export function secretKeyBytes(secret: string): Uint8Array {
  const encoded = secret.startsWith("whsec_") ? secret.slice(6) : secret;
  return fromBase64(encoded);
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
  return base64(new Uint8Array(await crypto.subtle.sign("HMAC", await signingKey(secret), encoder.encode(message))));
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

/** PKCS #8 of an Ed25519 private key is this fixed prefix and the key's 32-byte seed (RFC 8410). */
const PKCS8_ED25519 = Uint8Array.from([0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20]);

/** A new Ed25519 key pair, Standard Webhooks form: `whsk_` + base64 of the seed, `whpk_` + base64 of the public key. */
export async function newSigningKeyPair(): Promise<{ signingKey: string; publicKey: string }> {
  const pair = (await crypto.subtle.generateKey({ name: "Ed25519" }, true, ["sign", "verify"])) as CryptoKeyPair;
  const [pkcs8, raw] = await Promise.all([crypto.subtle.exportKey("pkcs8", pair.privateKey), crypto.subtle.exportKey("raw", pair.publicKey)]);
  const seed = new Uint8Array(pkcs8 as ArrayBuffer).slice(PKCS8_ED25519.length);
  return { signingKey: `whsk_${base64(seed)}`, publicKey: `whpk_${base64(new Uint8Array(raw as ArrayBuffer))}` };
}

const ed25519Keys = new Map<string, Promise<CryptoKey>>();

function ed25519Key(signingKey: string): Promise<CryptoKey> {
  let key = ed25519Keys.get(signingKey);
  if (!key) {
    if (ed25519Keys.size >= MAX_KEYS) ed25519Keys.clear();
    const seed = fromBase64(signingKey.slice("whsk_".length));
    const pkcs8 = new Uint8Array(PKCS8_ED25519.length + seed.length);
    pkcs8.set(PKCS8_ED25519);
    pkcs8.set(seed, PKCS8_ED25519.length);
    key = crypto.subtle.importKey("pkcs8", pkcs8, { name: "Ed25519" }, false, ["sign"]);
    ed25519Keys.set(signingKey, key);
    key.catch(() => ed25519Keys.delete(signingKey));
  }
  return key;
}

/** `webhook-signature` for an Ed25519 subscription: `v1a,<sig>` per signing key, space-separated, over `id.timestamp.body`. */
export async function ed25519Signature(signingKeys: string[], id: string, timestamp: number, body: string): Promise<string> {
  const signed = encoder.encode(`${id}.${timestamp}.${body}`);
  const signatures = await Promise.all(
    signingKeys.map(async (signingKey) => `v1a,${base64(new Uint8Array(await crypto.subtle.sign("Ed25519", await ed25519Key(signingKey), signed)))}`),
  );
  return signatures.join(" ");
}

export interface SigningSecrets {
  current: string;
  /** The secret before the last rotation, while its 24 hours last; null otherwise. */
  previous: string | null;
  /**
   * An Ed25519 subscription's signing keys (whsk_…): they make `webhook-signature`; the secrets
   * still make `hook-hmac`. With their public keys (whpk_…, the same order), `webhook-key-id` names
   * each signature's key by its thumbprint (jwk.ts).
   */
  ed25519?: { current: string; previous: string | null; publicKeys?: string[] } | null;
}

/**
 * Every signature header of one attempt. During a rotation's 24 hours:
 * - `webhook-signature` carries one signature per secret (Standard Webhooks' own rule);
 * - `hook-hmac` stays keyed by the previous secret, the one a receiver that has not acted on the
 *   rotation still holds, and `hook-hmac-next` carries the HMAC keyed by the new secret.
 * When the window ends, `hook-hmac` is keyed by the new secret and `hook-hmac-next` is gone. So a
 * receiver that accepts a match with either `hook-hmac` or `hook-hmac-next` keeps working
 * whenever it switches, and one that never looks at `hook-hmac-next` is never broken by a
 * rotation before the window ends. An Ed25519 subscription's `webhook-signature` carries `v1a`
 * signatures instead of `v1`, one per key pair (the previous pair's too, for the same 24 hours),
 * and `webhook-key-id` the `kid` of each pair's public key, in the same order.
 */
export async function signatureHeaders(secrets: SigningSecrets, deliveryId: string, timestamp: number, body: string): Promise<Record<string, string>> {
  const all = secrets.previous ? [secrets.current, secrets.previous] : [secrets.current];
  const publicKeys = secrets.ed25519?.publicKeys;
  const [hmacNow, hmacNext, signature, keyIds] = await Promise.all([
    hookHmac(secrets.previous ?? secrets.current, body),
    secrets.previous ? hookHmac(secrets.current, body) : null,
    secrets.ed25519
      ? ed25519Signature(
          secrets.ed25519.previous ? [secrets.ed25519.current, secrets.ed25519.previous] : [secrets.ed25519.current],
          deliveryId,
          timestamp,
          body,
        )
      : standardSignature(all, deliveryId, timestamp, body),
    publicKeys ? Promise.all(publicKeys.map(kidOf)) : null,
  ]);
  return {
    "hook-hmac": hmacNow,
    ...(hmacNext ? { "hook-hmac-next": hmacNext } : {}),
    "webhook-id": deliveryId,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": signature,
    ...(keyIds ? { "webhook-key-id": keyIds.join(" ") } : {}),
  };
}
