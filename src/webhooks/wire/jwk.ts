/**
 * An Ed25519 public key as a JWK (RFC 8037), with its RFC 7638 thumbprint as `kid`: what a JWK Set
 * lists (docs/interface.md, "Key discovery") and what `webhook-key-id` names, one per `v1a`
 * signature.
 */
import { base64url, fromBase64 } from "../../lib/crypto";

export interface Jwk {
  kty: "OKP";
  crv: "Ed25519";
  x: string;
  kid: string;
  use: "sig";
  alg: "EdDSA";
}

const encoder = new TextEncoder();
const kids = new Map<string, Promise<string>>();
/** Thumbprints kept at most (an isolate sees few subscriptions' keys; the map is cleared past it). */
const MAX_KIDS = 1000;

/** The key's `x`: base64url of the 32 bytes after `whpk_`. */
function xOf(publicKey: string): string {
  return base64url(fromBase64(publicKey.slice("whpk_".length)));
}

/**
 * The RFC 7638 thumbprint of a `whpk_` key: SHA-256 of the JSON of its required members
 * (`crv`, `kty`, `x`) in that order with no spaces, as base64url.
 */
export function kidOf(publicKey: string): Promise<string> {
  let kid = kids.get(publicKey);
  if (!kid) {
    if (kids.size >= MAX_KIDS) kids.clear();
    const members = `{"crv":"Ed25519","kty":"OKP","x":"${xOf(publicKey)}"}`;
    kid = crypto.subtle.digest("SHA-256", encoder.encode(members)).then((digest) => base64url(new Uint8Array(digest)));
    kids.set(publicKey, kid);
  }
  return kid;
}

/** A `whpk_` key as a JWK. */
export async function jwkOf(publicKey: string): Promise<Jwk> {
  return { kty: "OKP", crv: "Ed25519", x: xOf(publicKey), kid: await kidOf(publicKey), use: "sig", alg: "EdDSA" };
}
