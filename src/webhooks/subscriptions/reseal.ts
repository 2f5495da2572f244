import { and, asc, eq, gt, isNull } from "drizzle-orm";
import type { Db } from "../../db/client";
import { fixedLimit } from "../../db/fixed-limit";
import { webhookSubscriptions, type SubscriptionRow } from "../../db/schema";
import { sealedWithNewest } from "../../lib/encryption";
import { sealAll } from "./sealing";
import { previousSecretValid, reveal } from "./subscriptions";

/** Subscriptions looked at per call: each is opened and sealed again, so a call stays short. */
export const RESEAL_BATCH = 200;

export interface ResealReport {
  /** Rows sealed again with the newest key in this call. */
  resealed: number;
  /** Rows no listed key opens: restore their key, or their owners delete and re-create them. */
  unreadable: { id: string; account_id: string }[];
  /** Pass as `after` to go on; null once every subscription was looked at. */
  next_after: string | null;
}

/**
 * Seals every subscription's secrets with the newest ENCRYPTION_KEY (after a key was added in
 * front), RESEAL_BATCH rows a call in id order after `after`. Each row is sealed again under a
 * guard that it did not change meanwhile; a row changed meanwhile is read again and looked at
 * again (a change seals every field with the newest key itself, sealing.ts, so this settles at
 * once), so a call that reports a row done leaves nothing of it under an older key. An expired
 * previous secret is dropped.
 */
export async function resealSubscriptions(db: Db, encryptionKey: string | undefined, after: string | null, now = Date.now()): Promise<ResealReport> {
  const rows = await db
    .select()
    .from(webhookSubscriptions)
    .where(after === null ? undefined : gt(webhookSubscriptions.id, after))
    .orderBy(asc(webhookSubscriptions.id))
    .limit(fixedLimit(RESEAL_BATCH));
  const report: ResealReport = { resealed: 0, unreadable: [], next_after: rows.length === RESEAL_BATCH ? rows.at(-1)!.id : null };
  for (const first of rows) {
    let row: SubscriptionRow | undefined = first;
    for (let tries = 0; row && tries < MAX_TRIES; tries++) {
      const outcome = await resealRow(db, encryptionKey, row, now);
      if (outcome === "resealed") report.resealed += 1;
      if (outcome === "unreadable") report.unreadable.push({ id: row.id, account_id: row.accountId });
      if (outcome !== "changed") break;
      row = await db.select().from(webhookSubscriptions).where(eq(webhookSubscriptions.id, row.id)).get();
    }
  }
  return report;
}

/** How often a row that keeps changing under the re-seal is read again before it is left for the next call. */
const MAX_TRIES = 5;

async function resealRow(
  db: Db,
  encryptionKey: string | undefined,
  row: SubscriptionRow,
  now: number,
): Promise<"current" | "resealed" | "unreadable" | "changed"> {
  const previousValid = previousSecretValid(row, now);
  const previousSigningKey = previousValid ? row.previousSigningKey : null;
  const sealed = [row.credentials, row.secret, ...(previousValid ? [row.previousSecret!] : []), row.signingKey, previousSigningKey].filter(
    (text) => text !== null,
  );
  const current = await Promise.all(sealed.map((text) => sealedWithNewest(encryptionKey, text)));
  if (current.every(Boolean) && (previousValid || (row.previousSecret === null && row.previousSigningKey === null))) return "current";
  const { revealed } = await reveal(row, encryptionKey, now);
  if (!revealed) return "unreadable";
  const changed = await db
    .update(webhookSubscriptions)
    .set({
      ...(await sealAll(encryptionKey, revealed)),
      previousSecretExpiresAt: revealed.previousSecretText === null ? null : row.previousSecretExpiresAt,
      previousPublicKey: revealed.previousSecretText === null ? null : row.previousPublicKey,
    })
    .where(
      and(
        eq(webhookSubscriptions.id, row.id),
        eq(webhookSubscriptions.credentials, row.credentials),
        eq(webhookSubscriptions.secret, row.secret),
        row.signingKey === null ? isNull(webhookSubscriptions.signingKey) : eq(webhookSubscriptions.signingKey, row.signingKey),
        row.previousSecret === null ? isNull(webhookSubscriptions.previousSecret) : eq(webhookSubscriptions.previousSecret, row.previousSecret),
      ),
    )
    .returning({ id: webhookSubscriptions.id });
  return changed.length > 0 ? "resealed" : "changed";
}
