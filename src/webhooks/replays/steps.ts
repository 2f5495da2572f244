/**
 * A replay's steps: each bounded, each run by one queue message that sends the next (a lost one
 * is sent again by the cron: `resumeStalledReplays`), each safe to run twice.
 *   log      copies the window's deliveries from the log, LOG_CHUNK rows a step, in the log's
 *            order, into the replay's items (keyed by sequence: a delivery copied twice is kept once);
 *   archive  then one archive object a step, streamed, its records of the window copied in
 *            statements of ITEM_BATCH_BYTES at most. The log goes first: a delivery removed from
 *            the log after its pass was copied there, and one removed before was archived before
 *            its removal, so this pass finds it;
 *   send     then SENT_AT_ONCE items a step, in sequence order, become deliveries handed to the
 *            queue, once the first attempts of those of the step before have all ended (so no
 *            attempt of a hundred starts before one of the hundred before it); the last step
 *            marks the replay done, its count made exact.
 * A canceled replay's steps delete its items, ITEMS_DROPPED_AT_ONCE a step.
 */
import { runNamedBatch, type Db } from "../../db/client";
import type { ShardQueue } from "../outbox/message";
import { handOver } from "../outbox/outbox";
import { withinBytes } from "../../lib/within-bytes";
import { archiveObjects, archivedRecords, windowed, type ArchivedRecord } from "./archived";
import { inWindow } from "./replayable";
import { windowOf } from "./replays";
import {
  copyArchived,
  copyFromLog,
  countSent,
  selectFirstAttemptOpen,
  deleteItems,
  finishReplay,
  dropSentItems,
  selectLogKeys,
  selectReplayById,
  takeStalledReplays,
  sendNextItems,
  updateReplay,
  type ReplayItem,
  type ReplayRow,
} from "./statements";

export const LOG_CHUNK = 1000;
export const LOG_COPY_BYTES = 8_000_000;
export const ITEM_BATCH_BYTES = 1_000_000;
const encoder = new TextEncoder();
export const SENT_AT_ONCE = 100;
export const ITEMS_DROPPED_AT_ONCE = 1000;
/** A step that waits for the attempts of the one before comes back this much later. */
export const WAIT_SECONDS = 1;
/** A running replay no step has moved on for this long has lost its message. */
export const STALLED_MS = 5 * 60_000;
/** Stalled replays one cron run sends a step for, per shard. */
export const RESUMED_AT_ONCE = 10;

/** What a step leaves: nothing more to do, a next step now, or one after a wait. */
export type StepResult = { next: "none" } | { next: "now" } | { next: "later"; delaySeconds: number };

const NONE: StepResult = { next: "none" };
const NOW: StepResult = { next: "now" };

/** Runs the replay's next step on its shard's database; `archive` is the ARCHIVE bucket when bound. */
export async function continueReplay(db: Db, archive: R2Bucket | undefined, queue: ShardQueue, replayId: string, now: number): Promise<StepResult> {
  const replay = await selectReplayById(db, replayId).get();
  if (!replay) return NONE;
  if (replay.status !== "running") return (await deleteItems(db, replayId, ITEMS_DROPPED_AT_ONCE)).length === ITEMS_DROPPED_AT_ONCE ? NOW : NONE;
  if (replay.phase === "log") return copyLogStep(db, replay, now);
  if (replay.phase === "archive") return copyArchiveStep(db, archive, replay, now);
  return sendStep(db, queue, replay, now);
}

async function copyLogStep(db: Db, replay: ReplayRow, now: number): Promise<StepResult> {
  const keys = await selectLogKeys(db, replay, LOG_CHUNK);
  // As many as LOG_COPY_BYTES of stored bodies hold (one alone however large): the copy's statement stays bounded in bytes.
  const last =
    keys[
      withinBytes(
        keys.map((key) => key.bytes),
        LOG_COPY_BYTES,
      ) - 1
    ];
  if (!last) {
    await updateReplay(db, replay.id, "log", { phase: "archive", updatedAt: now });
    return NOW;
  }
  await runNamedBatch(db, {
    copied: copyFromLog(db, replay, windowOf(replay), last),
    moved: updateReplay(db, replay.id, "log", { logCreated: last.createdAt, logId: last.id, updatedAt: now }),
  });
  return NOW;
}

async function copyArchiveStep(db: Db, archive: R2Bucket | undefined, replay: ReplayRow, now: number): Promise<StepResult> {
  const window = windowOf(replay);
  const [object] = archive ? (await archiveObjects(archive, window, replay.archiveKey, 1)).objects : [];
  if (!archive || !object) {
    await updateReplay(db, replay.id, "archive", { phase: "send", updatedAt: now });
    return NOW;
  }
  const { counts } = object;
  const none = counts !== null && (counts.replayable === 0 || counts.last < window.since || counts.first > window.until);
  if (!none) {
    // Each statement's JSON within ITEM_BATCH_BYTES (one item alone however large: D1 binds up to 2 MB).
    let items: Omit<ReplayItem, "replayId">[] = [];
    let bytes = 0;
    for await (const record of archivedRecords(archive, object.key)) {
      if (!inWindow(windowed(record), window)) continue;
      const item = itemOf(record, replay);
      const size = encoder.encode(JSON.stringify(item)).length + 1;
      if (items.length > 0 && bytes + size > ITEM_BATCH_BYTES) {
        await copyArchived(db, replay.id, items);
        items = [];
        bytes = 0;
      }
      items.push(item);
      bytes += size;
    }
    if (items.length > 0) await copyArchived(db, replay.id, items);
  }
  await updateReplay(db, replay.id, "archive", { archiveKey: object.key, updatedAt: now });
  return NOW;
}

/** An archived record as a replay's item: its bytes as sent, in the content type they were sent in. Pure. */
function itemOf(record: ArchivedRecord, replay: ReplayRow): Omit<ReplayItem, "replayId"> {
  return {
    sequence: record.sequence!,
    deliveryId: record.id,
    paymentId: record.payment_id,
    eventId: record.event_id,
    paymentVersion: record.payment_version,
    event: record.event === "payment.changed" ? null : record.event,
    body: record.body,
    flags: null,
    contentType: record.headers?.["content-type"] ?? contentTypeOf(record.body),
    createdAt: Date.parse(record.created) || replay.since,
  };
}

/** The content type of a body archived without headers (never attempted): JSON or a form. Pure. */
function contentTypeOf(body: string): string {
  return body.startsWith("{") ? "application/json" : "application/x-www-form-urlencoded";
}

async function sendStep(db: Db, queue: ShardQueue, replay: ReplayRow, now: number): Promise<StepResult> {
  if ((await selectFirstAttemptOpen(db, replay.id)).length > 0) {
    // Still moving on: the cron's look for stalled replays passes it by.
    if (now - replay.updatedAt > STALLED_MS / 2) await updateReplay(db, replay.id, "send", { updatedAt: now });
    return { next: "later", delaySeconds: WAIT_SECONDS };
  }
  // Dated after the hundred before (dated from its step's time, one millisecond apart).
  const from = replay.sent > 0 ? Math.max(now, replay.updatedAt + SENT_AT_ONCE) : now;
  const { sent } = await runNamedBatch(db, {
    sent: sendNextItems(db, replay, SENT_AT_ONCE, from),
    counted: countSent(db, replay, SENT_AT_ONCE, from),
    dropped: dropSentItems(db, replay.id),
  });
  if (sent.length === 0) {
    // Nothing left: done, its count what it sent (unless a copy of this step went first and sent more).
    await finishReplay(db, replay, now);
    return NONE;
  }
  await handOver(
    db,
    queue,
    sent.map((row) => row.id),
  );
  return NOW;
}

/**
 * Sends a step for each running replay that no step has moved on for STALLED_MS (its message was
 * lost), RESUMED_AT_ONCE at most, marked as moved on now (so it is sent once, not each run);
 * returns how many.
 */
export async function resumeStalledReplays(db: Db, queue: ShardQueue, now: number): Promise<number> {
  const stalled = await takeStalledReplays(db, now - STALLED_MS, now, RESUMED_AT_ONCE);
  if (stalled.length > 0) await queue.queue.sendBatch(stalled.map(({ id }) => ({ body: { replay_id: id, shard: queue.shard }, contentType: "json" as const })));
  return stalled.length;
}
