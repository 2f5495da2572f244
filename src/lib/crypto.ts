const encoder = new TextEncoder();

export function base64(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/** Lower-case hex of bytes. */
export function toHex(bytes: Uint8Array): string {
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("");
}

export function base64url(bytes: Uint8Array): string {
  return base64(bytes).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** The bytes base64 text stands for; throws on text that is not base64. */
export function fromBase64(text: string): Uint8Array {
  return Uint8Array.from(atob(text), (ch) => ch.charCodeAt(0));
}

/** The bytes URL-safe base64 stands for, with or without its padding; throws on text that is not base64. */
export function fromBase64url(text: string): Uint8Array {
  return fromBase64(text.replace(/-/g, "+").replace(/_/g, "/") + "=".repeat((4 - (text.length % 4)) % 4));
}

/** A value as the service's opaque cursors carry it: its JSON's UTF-8 as URL-safe base64. */
export function cursorText(value: unknown): string {
  return base64url(encoder.encode(JSON.stringify(value)));
}

/** What `cursorText` made; throws on text it did not make. */
export function cursorValue(text: string): unknown {
  return JSON.parse(new TextDecoder().decode(fromBase64url(text)));
}

/** HTTP Basic credentials as RFC 7617 sends them with `charset="UTF-8"`: any Unicode text, as UTF-8. */
export function basicAuthorization(username: string, password: string): string {
  return `Basic ${base64(encoder.encode(`${username}:${password}`))}`;
}

/** A generated secret: 32 random bytes as URL-safe base64 (43 characters). */
export function newSecret(): string {
  return base64url(crypto.getRandomValues(new Uint8Array(32)));
}

export async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", encoder.encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** Compares two strings in time that depends only on their lengths. */
export function constantTimeEqual(a: string, b: string): boolean {
  const left = encoder.encode(a);
  const right = encoder.encode(b);
  if (left.byteLength !== right.byteLength) {
    // Still spend a comparison so a length mismatch is not faster to detect.
    crypto.subtle.timingSafeEqual(left, left);
    return false;
  }
  return crypto.subtle.timingSafeEqual(left, right);
}
