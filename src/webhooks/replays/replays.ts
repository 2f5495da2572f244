/**
 * Replay (docs/interface.md, "Replay"): the API's verbs. A replay sends again every delivery a
 * subscription made over a window, from its log and from the archive (its steps: steps.ts), in
 * sequence order, each with the original's body, ids and numbers.
 */
import { runNamedBatch, type Db } from "../../db/client";
import type { ServiceContext } from "../../context";
import { invalid, notFound } from "../../errors";
import { newId } from "../../lib/ids";
import { countWhere, listTable } from "../../db/list-page";
import type { PageRequest } from "../../lib/pagination";
import { webhookReplays } from "../../db/schema";
import { activeSubscription } from "../subscriptions/subscriptions";
import { requireSubscription } from "../subscriptions/deliveries";
import { archiveObjects, archivedRecords, windowed } from "./archived";
import { inWindow, type ReplayWindow } from "./replayable";
import { replayWindow, type ReplayAsk } from "./window";
import { cancelReplayRow, countInLog, endUnattempted, insertReplay, replaysOf, selectReplay, type ReplayRow } from "./statements";

export type { ReplayRow } from "./statements";

/** Archive objects a count opens at most (those its metadata cannot answer for: a window's edges, a payment filter, objects written without it). */
export const MAX_OPENED = 50;
/** Objects one R2 list call names at most. */
const LISTED_AT_ONCE = 1000;

/** The window a replay row asks for. Pure. */
export function windowOf(replay: ReplayRow): ReplayWindow {
  return {
    accountId: replay.accountId,
    subscriptionId: replay.subscriptionId,
    since: replay.since,
    until: replay.until,
    paymentIds: replay.paymentIds === null ? null : (JSON.parse(replay.paymentIds) as string[]),
  };
}

/**
 * How many deliveries a replay of `window` sends: the log's, counted by SQL, and the archive's,
 * from each object's counts where they answer (an object wholly inside the window, no payment
 * filter) and by reading it where they do not, MAX_OPENED objects at most (past that, a 400 asks
 * for a narrower window).
 */
export async function countReplay(db: Db, archive: R2Bucket | undefined, window: ReplayWindow): Promise<number> {
  const [{ n: inLog }] = (await countInLog(db, window)) as [{ n: number }];
  if (!archive) return inLog;
  let archived = 0;
  let opened = 0;
  let after: string | null = null;
  for (;;) {
    const { objects, more } = await archiveObjects(archive, window, after, LISTED_AT_ONCE);
    for (const { key, counts } of objects) {
      if (counts && (counts.replayable === 0 || counts.last < window.since || counts.first > window.until)) continue;
      if (counts && window.paymentIds === null && counts.first >= window.since && counts.last <= window.until) {
        archived += counts.replayable;
        continue;
      }
      if (++opened > MAX_OPENED) throw invalid({ since: [`The window's archive is too large to count for these payments; narrow the window.`] });
      for await (const record of archivedRecords(archive, key)) if (inWindow(windowed(record), window)) archived++;
    }
    if (!more || objects.length === 0) return inLog + archived;
    after = objects.at(-1)!.key;
  }
}

/**
 * Starts a replay of the subscription's deliveries over the window asked (or, `dryRun`, only
 * counts them): refused with a 400 when the window is reversed, over MAX_REPLAY_DAYS or in the
 * future, or names too many payments; 404 for another account's subscription; 409 when it is
 * paused. The record starts `running` and its first step goes to the queue.
 */
export async function startReplay(
  { db, accountId, queue, archive }: ServiceContext,
  subscriptionId: string,
  ask: ReplayAsk,
  dryRun: boolean,
): Promise<{ count: number } | ReplayRow> {
  const now = Date.now();
  const asked = replayWindow(ask, now);
  if ("problem" in asked) throw invalid(asked.problem);
  await activeSubscription(db, accountId, subscriptionId);
  const window: ReplayWindow = { accountId, subscriptionId, ...asked };
  const count = await countReplay(db, archive, window);
  if (dryRun) return { count };
  const [replay] = await insertReplay(db, {
    id: newId("rpl"),
    accountId,
    subscriptionId,
    since: asked.since,
    until: asked.until,
    paymentIds: asked.paymentIds === null ? null : JSON.stringify(asked.paymentIds),
    status: "running",
    count,
    sent: 0,
    phase: "log",
    sentSequence: 0,
    createdAt: now,
    updatedAt: now,
  });
  // Lost, the cron's look for stalled replays sends it again (steps.ts).
  await queue.queue.send({ replay_id: replay!.id, shard: queue.shard }, { contentType: "json" });
  return replay!;
}

/** One of the account's subscription's replays; 404 when there is none. */
export async function getReplay({ db, accountId }: ServiceContext, subscriptionId: string, replayId: string): Promise<ReplayRow> {
  return findReplay(db, accountId, subscriptionId, replayId);
}

async function findReplay(db: Db, accountId: string, subscriptionId: string, replayId: string): Promise<ReplayRow> {
  const replay = await selectReplay(db, accountId, subscriptionId, replayId).get();
  if (!replay) throw notFound();
  return replay;
}

/** A page of the subscription's replays, newest first. */
export async function listReplays({ db, accountId }: ServiceContext, subscriptionId: string, request: PageRequest) {
  await requireSubscription(db, accountId, subscriptionId);
  const where = replaysOf(accountId, subscriptionId);
  const page = await listTable(
    db,
    webhookReplays,
    { where, sort: webhookReplays.createdAt, id: webhookReplays.id, count: countWhere(db, webhookReplays, where), descending: true },
    request,
  );
  return { ...page, results: page.rows };
}

/**
 * Cancels a running replay: nothing more is sent, and its deliveries handed to the queue and not
 * yet attempted end unattempted; those under way end as they do. One already done or canceled is
 * answered as it is. Its copied items go in the steps that follow.
 */
export async function cancelReplay({ db, accountId, queue }: ServiceContext, subscriptionId: string, replayId: string): Promise<ReplayRow> {
  const now = Date.now();
  const { canceled } = await runNamedBatch(db, {
    canceled: cancelReplayRow(db, accountId, subscriptionId, replayId, now),
    ended: endUnattempted(db, replayId, now),
  });
  if (canceled.length === 0) return findReplay(db, accountId, subscriptionId, replayId);
  await queue.queue.send({ replay_id: replayId, shard: queue.shard }, { contentType: "json" });
  return canceled[0]!;
}
