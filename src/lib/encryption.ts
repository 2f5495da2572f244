import { AppError } from "../errors";

/**
 * AES-GCM at rest with the Worker secret ENCRYPTION_KEY (base64 of 32 bytes). A ciphertext is
 * `v1.` + base64(12-byte IV || ciphertext+tag).
 */
const keys = new Map<string, Promise<CryptoKey>>();
const encoder = new TextEncoder();

export function notConfigured(reason: string): AppError {
  console.error(JSON.stringify({ type: "config_error", message: reason }));
  return new AppError("not_configured", "Service is not configured.");
}

function keyBytes(encoded: string | undefined): Uint8Array {
  if (!encoded) throw notConfigured("ENCRYPTION_KEY is not set");
  let bytes: Uint8Array;
  try {
    bytes = Uint8Array.from(atob(encoded.trim()), (ch) => ch.charCodeAt(0));
  } catch {
    throw notConfigured("ENCRYPTION_KEY is not valid base64");
  }
  if (bytes.byteLength !== 32) throw notConfigured(`ENCRYPTION_KEY must be 32 bytes, got ${bytes.byteLength}`);
  return bytes;
}

function importKey(encoded: string | undefined): Promise<CryptoKey> {
  const bytes = keyBytes(encoded);
  const cacheKey = encoded!;
  let key = keys.get(cacheKey);
  if (!key) {
    key = crypto.subtle.importKey("raw", bytes, "AES-GCM", false, ["encrypt", "decrypt"]);
    keys.set(cacheKey, key);
  }
  return key;
}

/** Throws the 500 "Service is not configured." when the key is missing or malformed. */
export function requireEncryptionKey(encoded: string | undefined): void {
  keyBytes(encoded);
}

export async function encrypt(encodedKey: string | undefined, plaintext: string): Promise<string> {
  const key = await importKey(encodedKey);
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const sealed = new Uint8Array(await crypto.subtle.encrypt({ name: "AES-GCM", iv }, key, encoder.encode(plaintext)));
  const out = new Uint8Array(iv.byteLength + sealed.byteLength);
  out.set(iv);
  out.set(sealed, iv.byteLength);
  return `v1.${toBase64(out)}`;
}

export async function decrypt(encodedKey: string | undefined, ciphertext: string): Promise<string> {
  const key = await importKey(encodedKey);
  if (!ciphertext.startsWith("v1.")) throw new Error("unknown ciphertext version");
  const bytes = Uint8Array.from(atob(ciphertext.slice(3)), (ch) => ch.charCodeAt(0));
  const plain = await crypto.subtle.decrypt({ name: "AES-GCM", iv: bytes.slice(0, 12) }, key, bytes.slice(12));
  return new TextDecoder().decode(plain);
}

export function toBase64(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}
