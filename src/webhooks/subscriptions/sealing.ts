/**
 * Sealing a subscription's secrets (credentials, signing secret and key, their previous ones) with
 * the newest ENCRYPTION_KEY. Every write of a subscription seals them all again, so a change never leaves a
 * field under an older key behind a re-seal that it raced (reseal.ts).
 *
 * A deployed key that opens none of the subscriptions already sealed is the wrong key (a typo'd
 * secret, another environment's): sealing with it would strand new subscriptions under a key
 * nobody keeps. Such a write is refused with the 500 "Service is not configured." and a
 * `config_error` log line, before anything is written.
 */
import { like, or, sql, type SQL } from "drizzle-orm";
import { webhookSubscriptions } from "../../db/schema";
import { encrypt, keyRing, notConfigured } from "../../lib/encryption";
import { fixedLimit } from "../../db/fixed-limit";

export interface Secrets {
  username: string;
  password: string;
  secretText: string;
  previousSecretText: string | null;
  /** An Ed25519 subscription's signing keys (whsk_…); null for HMAC signing, and the previous one once it expired. */
  signingKeyText: string | null;
  previousSigningKeyText: string | null;
}

/**
 * Whether the key list opens some subscription already sealed with a named key, or none is: as
 * SQL, for a write's own batch to apply only when it holds (and read back to say why it did not).
 */
export async function sealingKeyFits(encryptionKey: string | undefined): Promise<SQL> {
  const ring = await keyRing(encryptionKey);
  const secret = webhookSubscriptions.secret;
  const ours = or(...ring.keys.map((key) => sql`substr(${secret}, 1, 20) = ${`v2.${key.id}.`}`));
  const one = (where: SQL | undefined) => sql`exists (select 1 from ${webhookSubscriptions} where ${where} limit ${fixedLimit(1)})`;
  return sql`(not ${one(like(secret, "v2.%"))} or ${one(ours)})`;
}

/** The 500 of a key list that is not the subscriptions' key, with its log line. */
export function wrongSealingKey() {
  return notConfigured(
    "ENCRYPTION_KEY lists no key that sealed the subscriptions already stored: it is not their key. Deploy the right key (a new key goes first, the old one after it); nothing was sealed with this one.",
  );
}

/** The sealed columns for `secrets`, every one with the newest key. */
export async function sealAll(encryptionKey: string | undefined, secrets: Secrets) {
  const seal = (text: string | null) => (text === null ? null : encrypt(encryptionKey, text));
  const [credentials, secret, previousSecret, signingKey, previousSigningKey] = await Promise.all([
    encrypt(encryptionKey, JSON.stringify([secrets.username, secrets.password])),
    encrypt(encryptionKey, secrets.secretText),
    seal(secrets.previousSecretText),
    seal(secrets.signingKeyText),
    seal(secrets.previousSigningKeyText),
  ]);
  return { credentials, secret, previousSecret, signingKey, previousSigningKey };
}
