import { previousSecretValid, reveal, type Revealed, type SubscriptionRow } from "./subscriptions";

/**
 * Decrypted subscription secrets, kept in the isolate for a minute so that a burst to one
 * subscription decrypts once. Keyed by the sealed values themselves (and the key), so a rotated
 * secret or new credentials are never served from here; never logged, never leaves the isolate.
 */
const KEEP_MS = 60_000;
const MAX_ENTRIES = 1000;
const opened = new Map<string, { at: number; revealed: Promise<Revealed | null> }>();

export function openSecrets(row: SubscriptionRow, encryptionKey: string | undefined, now = Date.now()): Promise<Revealed | null> {
  const previousValid = previousSecretValid(row, now);
  const key = [encryptionKey, row.id, row.credentials, row.secret, previousValid ? row.previousSecret : ""].join("\n");
  const kept = opened.get(key);
  if (kept && now - kept.at < KEEP_MS) return kept.revealed;
  if (opened.size >= MAX_ENTRIES) opened.clear();
  const revealed = reveal(row, encryptionKey, now).then((subscription) => subscription.revealed);
  opened.set(key, { at: now, revealed });
  revealed.catch(() => opened.delete(key));
  return revealed;
}
