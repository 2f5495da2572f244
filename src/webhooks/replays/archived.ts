/**
 * A replay's reads of the archive (upkeep/retention.ts writes it): the objects of a subscription's
 * days in a window, in key order (day, then the first delivery's id), and their records one line
 * at a time, streamed through gzip, never an object whole in memory.
 */
import { archivedLines, dayOf, subscriptionArchive } from "../subscriptions/archive";
import { replayable, type ReplayWindow, type Windowed } from "./replayable";

/** A line of the archive: a delivery record as the log shows it, with `subscription_id`. */
export interface ArchivedRecord {
  subscription_id: string;
  id: string;
  event: string;
  payment_id: string;
  event_id: string | null;
  sequence: number | null;
  payment_version: number | null;
  body: string;
  created: string;
  test: boolean;
  headers: Record<string, string> | null;
  replay_id?: string | null;
}

/**
 * What retention writes on each object (R2 custom metadata): how many of its records a replay
 * sends, and the first and last `created` (ms) among them. Objects written before it say nothing.
 */
export interface ObjectCounts {
  replayable: number;
  first: number;
  last: number;
}

/** The metadata retention writes for `records`. Pure. */
export function objectCounts(records: { sequence: number | null; test: boolean; replayId: string | null; createdAt: number }[]): Record<string, string> {
  const sent = records.filter(replayable);
  if (sent.length === 0) return { replayable: "0", first: "0", last: "0" };
  return { replayable: String(sent.length), first: String(Math.min(...sent.map((r) => r.createdAt))), last: String(Math.max(...sent.map((r) => r.createdAt))) };
}

/** The counts an object carries, or null when it carries none. Pure. */
export function countsOf(metadata: Record<string, string> | undefined): ObjectCounts | null {
  const [replayable, first, last] = [metadata?.replayable, metadata?.first, metadata?.last].map(Number);
  return Number.isInteger(replayable) && Number.isInteger(first) && Number.isInteger(last) ? { replayable: replayable!, first: first!, last: last! } : null;
}

/** An archived record as the replay rule (replayable.ts) sees it. Pure. */
export function windowed(record: ArchivedRecord): Windowed {
  return {
    sequence: record.sequence,
    test: record.test,
    replayId: record.replay_id ?? null,
    subscriptionId: record.subscription_id,
    createdAt: Date.parse(record.created),
    paymentId: record.payment_id,
  };
}

/**
 * The objects of the window's days after the key `after` (from its first day when null), in key
 * order, `limit` at most per call of R2's list, with their metadata; `more` when the list goes on.
 */
export async function archiveObjects(
  archive: R2Bucket,
  window: ReplayWindow,
  after: string | null,
  limit: number,
): Promise<{ objects: { key: string; counts: ObjectCounts | null }[]; more: boolean }> {
  const prefix = subscriptionArchive(window.accountId, window.subscriptionId);
  const lastDay = dayOf(window.until);
  const listed = await archive.list({ prefix, startAfter: after ?? `${prefix}${dayOf(window.since)}`, limit });
  const objects = listed.objects.filter((object) => object.key.slice(prefix.length, prefix.length + 10) <= lastDay);
  return {
    objects: objects.map((object) => ({ key: object.key, counts: countsOf(object.customMetadata) })),
    more: listed.truncated && objects.length === listed.objects.length,
  };
}

/** Each record of the object `key` (none when it is gone), one line at a time. */
export async function* archivedRecords(archive: R2Bucket, key: string): AsyncGenerator<ArchivedRecord> {
  for await (const line of archivedLines(archive, key)) yield JSON.parse(line) as ArchivedRecord;
}
