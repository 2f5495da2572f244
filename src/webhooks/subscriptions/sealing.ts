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
import { like, or, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
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

/** Refuses a key list that opens none of the subscriptions already sealed with a named key. */
export async function checkSealingKey(db: Db, encryptionKey: string | undefined): Promise<void> {
  const ring = await keyRing(encryptionKey);
  const secret = webhookSubscriptions.secret;
  const ours = or(...ring.keys.map((key) => sql`substr(${secret}, 1, 20) = ${`v2.${key.id}.`}`));
  const [sealed, opened] = await db.batch([
    db.select({ id: webhookSubscriptions.id }).from(webhookSubscriptions).where(like(secret, "v2.%")).limit(fixedLimit(1)),
    db.select({ id: webhookSubscriptions.id }).from(webhookSubscriptions).where(ours).limit(fixedLimit(1)),
  ]);
  if (sealed.length > 0 && opened.length === 0) {
    throw notConfigured(
      "ENCRYPTION_KEY lists no key that sealed the subscriptions already stored: it is not their key. Deploy the right key (a new key goes first, the old one after it); nothing was sealed with this one.",
    );
  }
}

/** The sealed columns for `secrets`, every one with the newest key, after checking the key fits. */
export async function sealSecrets(db: Db, encryptionKey: string | undefined, secrets: Secrets) {
  await checkSealingKey(db, encryptionKey);
  return sealAll(encryptionKey, secrets);
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
