import { and, eq } from "drizzle-orm";
import { webhookSubscriptions } from "../../db/schema";
import { inAccount } from "../../db/scope";
import { notFound } from "../../errors";
import type { ServiceContext } from "../../context";

export const NO_PUBLIC_KEY = "This subscription signs with HMAC (signing: hmac): it has no public key. Verify its deliveries with its secret.";

/** An Ed25519 subscription's public keys: the current one, and the one before the last rotation while it still signs. */
export async function publicKeys({ db, accountId }: ServiceContext, id: string, now = Date.now()) {
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
