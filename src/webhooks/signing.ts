import { toBase64 } from "../lib/encryption";

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

async function hmac(secret: string, message: string): Promise<string> {
  const key = await crypto.subtle.importKey("raw", secretKeyBytes(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return toBase64(new Uint8Array(await crypto.subtle.sign("HMAC", key, encoder.encode(message))));
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

export interface SignedHeaders {
  [name: string]: string;
}

/** Every signature header of one attempt. `secrets[0]` is the current secret. */
export async function signatureHeaders(secrets: string[], deliveryId: string, timestamp: number, body: string): Promise<SignedHeaders> {
  return {
    "hook-hmac": await hookHmac(secrets[0]!, body),
    "webhook-id": deliveryId,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": await standardSignature(secrets, deliveryId, timestamp, body),
  };
}
