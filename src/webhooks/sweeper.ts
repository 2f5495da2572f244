import { and, eq, isNotNull, isNull, lt, lte, or } from "drizzle-orm";
import { inList } from "../db/in-list";
import { createDb } from "../db/client";
import { webhookDeliveries } from "../db/schema";
import type { Env } from "../env";
import { handOver } from "./outbox";

/** A due delivery handed to the queue this long ago and never claimed is taken as lost. */
export const LOST_AFTER_MS = 2 * 60 * 1000;
/** Rows re-sent per round, and the most one sweep re-sends (a queue outage's backlog drains in minutes). */
const SWEEP_ROUND = 500;
const SWEEP_MAX = 20_000;

/**
 * The cron trigger: re-sends due deliveries whose message will not come. The row tells which:
 *   - never handed over: the send after the commit failed;
 *   - claimed, and the claim lapsed with no outcome recorded: the worker died mid-attempt (the
 *     log shows that attempt as never answered);
 *   - handed over and unclaimed for LOST_AFTER_MS since both its handover and its due time: the
 *     message is lost. Each re-send is a new handover, so a message that is only late behind a
 *     slow queue is re-sent at most once per LOST_AFTER_MS, not at every sweep.
 * `restarted` (the local service just restarted, and with it its in-memory queue and every
 * worker) takes every due pending delivery as lost at once: the row is the truth.
 */
export async function sweepOutbox(env: Env, now = Date.now(), { restarted = false } = {}): Promise<number> {
  const db = createDb(env.DB);
  const lostBefore = now - LOST_AFTER_MS;
  const lost = restarted
    ? undefined
    : and(
        or(isNull(webhookDeliveries.claimedUntil), lt(webhookDeliveries.claimedUntil, now)),
        or(
          isNull(webhookDeliveries.enqueuedAt),
          isNotNull(webhookDeliveries.claimToken),
          and(lt(webhookDeliveries.enqueuedAt, lostBefore), lt(webhookDeliveries.nextAttemptAt, lostBefore)),
        ),
      );
  let resent = 0;
  // Rows re-sent in a round are handed over at `now`, so the next round's query skips them.
  while (resent < SWEEP_MAX) {
    const due = await db
      .select({ id: webhookDeliveries.id })
      .from(webhookDeliveries)
      .where(
        and(
          eq(webhookDeliveries.status, "pending"),
          lte(webhookDeliveries.nextAttemptAt, now),
          lost,
          restarted ? or(isNull(webhookDeliveries.enqueuedAt), lt(webhookDeliveries.enqueuedAt, now)) : undefined,
        ),
      )
      .limit(SWEEP_ROUND);
    const ids = due.map((row) => row.id);
    if (ids.length === 0) break;
    await db.update(webhookDeliveries).set({ enqueuedAt: now, claimToken: null, claimedUntil: null }).where(inList(webhookDeliveries.id, ids));
    if (!(await handOver(db, env.DELIVERIES, ids))) break; // the queue is down: the next sweep tries again
    resent += ids.length;
    if (ids.length < SWEEP_ROUND) break;
  }
  if (resent > 0) console.log(JSON.stringify({ type: "outbox_sweep", resent, restarted: restarted || undefined }));
  return resent;
}
