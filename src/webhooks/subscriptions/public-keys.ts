import { and, eq, isNull } from "drizzle-orm";
import type { Db } from "../../db/client";
import { accounts, publishedKeys, webhookSubscriptions } from "../../db/schema";
import { jwkOf, type Jwk } from "../wire/jwk";
import { inAccount } from "../../db/scope";
import { notFound } from "../../errors";
import type { ServiceContext } from "../../context";

export const NO_PUBLIC_KEY = "This subscription signs with HMAC (signing: hmac): it has no public key. Verify its deliveries with its secret.";

/** An Ed25519 subscription's public keys: the current one, and the one before the last rotation while it still signs. */
export async function publicKeys({ db, accountId }: Pick<ServiceContext, "db" | "accountId">, id: string, now = Date.now()) {
  const s = webhookSubscriptions;
  const row = await db
    .select({ signing: s.signing, publicKey: s.publicKey, previousPublicKey: s.previousPublicKey, previousSecretExpiresAt: s.previousSecretExpiresAt })
    .from(s)
    .where(and(inAccount(s, accountId), eq(s.id, id)))
    .get();
  if (!row) throw notFound();
  if (row.signing !== "ed25519" || row.publicKey === null) throw notFound(NO_PUBLIC_KEY);
  const previousValid = row.previousPublicKey !== null && (row.previousSecretExpiresAt ?? 0) > now;
  return {
    publicKey: row.publicKey,
    previousPublicKey: previousValid ? row.previousPublicKey : null,
    previousExpiresAt: previousValid ? row.previousSecretExpiresAt : null,
  };
}

/** A JWK Set (RFC 7517): what `GET …/jwks/` answers. */
export interface JwkSet {
  keys: Jwk[];
}

/**
 * Records that subscription `id` of the account publishes its keys (docs/interface.md, "Key
 * discovery"): written before the subscription is made, so a subscription never exists unpublished
 * (one whose making was refused leaves a row that leads nowhere: its JWK Set answers 404).
 */
export function publishKeys(directory: Db, accountId: string, id: string, now: number) {
  return directory.insert(publishedKeys).values({ subscriptionId: id, accountId, createdAt: now }).onConflictDoNothing();
}

/** Reads the account and shard of a subscription that publishes its keys, unless its account was erased. */
export function selectPublisher(directory: Db, id: string) {
  return directory
    .select({ accountId: accounts.id, shard: accounts.shard })
    .from(publishedKeys)
    .innerJoin(accounts, eq(accounts.id, publishedKeys.accountId))
    .where(and(eq(publishedKeys.subscriptionId, id), isNull(accounts.erasedAt)));
}

/** Deletes the account's publication of subscription `id`'s keys. */
export function unpublishKeys(directory: Db, accountId: string, id: string) {
  return directory.delete(publishedKeys).where(and(eq(publishedKeys.subscriptionId, id), eq(publishedKeys.accountId, accountId)));
}

/** An Ed25519 subscription's public keys as a JWK Set: the current one, and the previous one while it still signs (404 for `hmac`). */
export async function jwkSet(ctx: Pick<ServiceContext, "db" | "accountId">, id: string, now = Date.now()): Promise<JwkSet> {
  const keys = await publicKeys(ctx, id, now);
  return { keys: await Promise.all([keys.publicKey, ...(keys.previousPublicKey ? [keys.previousPublicKey] : [])].map(jwkOf)) };
}
