import { AppError } from "../errors";
import { base64, fromBase64, toHex } from "./crypto";

/**
 * AES-GCM at rest with the Worker secret ENCRYPTION_KEY: one or more keys (base64 of 32 bytes),
 * separated by commas, newest first. New data is sealed with the newest; data sealed with any
 * listed key is read. A key's id is the first 16 hex digits of its SHA-256, so a key names
 * itself and the secret holds nothing but keys.
 *
 * A ciphertext is `v2.<key id>.` + base64(12-byte IV || ciphertext+tag). Ciphertexts from before
 * key ids (`v1.` + the same) are read with whichever listed key opens them.
 *
 * Rotation: put the new key first (`NEW,OLD`), deploy, re-seal (POST /admin/encryption/reseal
 * until it reports none left), then drop the old key. A ciphertext whose key is not listed is
 * unreadable (reported as such by its owner), never a 500.
 */
const encoder = new TextEncoder();

interface RingKey {
  id: string;
  key: CryptoKey;
}

/** The configured keys, newest first. */
export interface KeyRing {
  newest: RingKey;
  keys: RingKey[];
}

const rings = new Map<string, Promise<KeyRing>>();

export function notConfigured(reason: string): AppError {
  console.error(JSON.stringify({ type: "config_error", message: reason }));
  return new AppError("not_configured", "Service is not configured.");
}

/** Each listed key's bytes; the 500 "Service is not configured." when one is missing or malformed. */
function keyBytes(encoded: string | undefined): Uint8Array[] {
  const parts = (encoded ?? "")
    .split(",")
    .map((part) => part.trim())
    .filter(Boolean);
  if (parts.length === 0) throw notConfigured("ENCRYPTION_KEY is not set");
  return parts.map((part, i) => {
    let bytes: Uint8Array;
    try {
      bytes = fromBase64(part);
    } catch {
      throw notConfigured(`ENCRYPTION_KEY's key ${i + 1} is not valid base64`);
    }
    if (bytes.byteLength !== 32) throw notConfigured(`ENCRYPTION_KEY's key ${i + 1} must be 32 bytes, got ${bytes.byteLength}`);
    return bytes;
  });
}

/** A key's id: the first 16 hex digits of its SHA-256. */
export async function keyId(bytes: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return toHex(digest.slice(0, 8));
}

export function keyRing(encoded: string | undefined): Promise<KeyRing> {
  let ring = encoded ? rings.get(encoded) : undefined;
  if (!ring) {
    const all = keyBytes(encoded);
    ring = Promise.all(
      all.map(async (bytes) => ({ id: await keyId(bytes), key: await crypto.subtle.importKey("raw", bytes, "AES-GCM", false, ["encrypt", "decrypt"]) })),
    ).then((keys) => ({ newest: keys[0]!, keys }));
    rings.set(encoded!, ring);
  }
  return ring;
}

/** Throws the 500 "Service is not configured." when the keys are missing or malformed. */
export function requireEncryptionKey(encoded: string | undefined): void {
  keyBytes(encoded);
}

export async function encrypt(encodedKeys: string | undefined, plaintext: string): Promise<string> {
  const { newest } = await keyRing(encodedKeys);
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const sealed = new Uint8Array(await crypto.subtle.encrypt({ name: "AES-GCM", iv }, newest.key, encoder.encode(plaintext)));
  const out = new Uint8Array(iv.byteLength + sealed.byteLength);
  out.set(iv);
  out.set(sealed, iv.byteLength);
  return `v2.${newest.id}.${base64(out)}`;
}

/** Opens a ciphertext with the listed key that sealed it; throws when none of them did. */
export async function decrypt(encodedKeys: string | undefined, ciphertext: string): Promise<string> {
  const { keys } = await keyRing(encodedKeys);
  const [version, id, body] = ciphertext.split(".");
  const candidates = version === "v2" ? keys.filter((key) => key.id === id) : version === "v1" ? keys : [];
  const bytes = fromBase64(version === "v2" ? (body ?? "") : (id ?? ""));
  for (const { key } of candidates) {
    try {
      const plain = await crypto.subtle.decrypt({ name: "AES-GCM", iv: bytes.slice(0, 12) }, key, bytes.slice(12));
      return new TextDecoder().decode(plain);
    } catch {
      // not this key: try the next listed one (v1 ciphertexts name none)
    }
  }
  throw new Error(version === "v2" ? `sealed with key ${id}, which ENCRYPTION_KEY does not list` : "no listed key opens it");
}

/** Whether a ciphertext is sealed with the newest listed key (nothing to re-seal). */
export async function sealedWithNewest(encodedKeys: string | undefined, ciphertext: string): Promise<boolean> {
  const { newest } = await keyRing(encodedKeys);
  return ciphertext.startsWith(`v2.${newest.id}.`);
}

const macRings = new Map<string, Promise<{ id: string; key: CryptoKey }[]>>();

/**
 * HMAC-SHA-256 keys for `purpose`, one derived (HKDF-SHA-256, info `purpose`) from each listed key,
 * newest first, each with its key's id: a value signed with the first verifies with any while a
 * rotation lists both, and names the key it was signed with.
 */
export function macKeys(encodedKeys: string | undefined, purpose: string): Promise<{ id: string; key: CryptoKey }[]> {
  const cacheKey = `${purpose}\n${encodedKeys ?? ""}`;
  let ring = macRings.get(cacheKey);
  if (!ring) {
    const all = keyBytes(encodedKeys);
    ring = Promise.all(
      all.map(async (bytes) => {
        const base = await crypto.subtle.importKey("raw", bytes, "HKDF", false, ["deriveKey"]);
        const key = await crypto.subtle.deriveKey(
          { name: "HKDF", hash: "SHA-256", salt: new Uint8Array(0), info: encoder.encode(purpose) },
          base,
          { name: "HMAC", hash: "SHA-256", length: 256 },
          false,
          ["sign"],
        );
        return { id: await keyId(bytes), key };
      }),
    );
    macRings.set(cacheKey, ring);
  }
  return ring;
}
