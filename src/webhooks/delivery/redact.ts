/**
 * What a receiver's answer must not carry into the delivery log: the credentials and signing
 * secrets an attempt sent, in the forms a receiver may echo them (as sent, URL-encoded,
 * JSON-escaped, base64 and base64url of their UTF-8 text; the signing key's bytes also in hex).
 * Pure.
 */
import { base64, base64url, toHex } from "../../lib/crypto";
import { secretKeyBytes } from "../wire/signing";

const encoder = new TextEncoder();

/** Every form of one secret text worth looking for. */
export function textForms(secret: string): string[] {
  const bytes = encoder.encode(secret);
  return [
    secret,
    encodeURIComponent(secret),
    new URLSearchParams({ s: secret }).toString().slice(2),
    JSON.stringify(secret).slice(1, -1),
    base64(bytes),
    base64(bytes).replace(/=+$/, ""),
    base64url(bytes),
  ];
}

/** Every form of a key's bytes worth looking for: base64, base64url and hex. */
export function keyForms(bytes: Uint8Array): string[] {
  const hex = toHex(bytes);
  return [base64(bytes), base64(bytes).replace(/=+$/, ""), base64url(bytes), hex, hex.toUpperCase()];
}

/** The forms of each credential and signing secret that an answer must not carry. */
export function secretForms({ username, password, secrets }: { username: string; password: string; secrets: (string | null)[] }): string[] {
  const forms = [...textForms(password), ...textForms(`${username}:${password}`)];
  for (const secret of secrets) {
    if (!secret) continue;
    forms.push(...textForms(secret));
    if (secret.startsWith("whsec_")) forms.push(...keyForms(secretKeyBytes(secret)));
  }
  return [...new Set(forms.filter((form) => form.length > 0))];
}

/**
 * `text` with every occurrence of each secret replaced by `[redacted]`, longest first, hex and
 * other letter-case-free forms matched in any case.
 */
export function redacted(text: string, secrets: string[]): string {
  const escape = (form: string) => form.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  let out = text;
  for (const secret of [...secrets].sort((a, b) => b.length - a.length)) {
    out =
      /^[0-9a-f]+$/i.test(secret) && secret.length >= 32 ? out.replace(new RegExp(escape(secret), "gi"), "[redacted]") : out.replaceAll(secret, "[redacted]");
  }
  return out;
}
