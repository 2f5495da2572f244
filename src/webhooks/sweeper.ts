import { and, eq, isNotNull, isNull, lt, lte, or } from "drizzle-orm";
import { inList } from "../db/in-list";
import { createDb } from "../db/client";
import { webhookDeliveries } from "../db/schema";
import type { Env } from "../env";
import { handOver } from "./outbox";

/** A due delivery handed to the queue this long ago and never claimed is taken as lost. */
export const LOST_AFTER_MS = 2 * 60 * 1000;
const SWEEP_LIMIT = 500;

/**
 * The cron trigger: re-sends due deliveries whose message will not come. The row tells which:
 *   - never handed over: the send after the commit failed;
 *   - claimed, and the claim lapsed with no outcome recorded: the worker died mid-attempt (the
 *     log shows that attempt as never answered);
 *   - handed over and unclaimed for LOST_AFTER_MS since both its handover and its due time: the
 *     message is lost. Each re-send is a new handover, so a message that is only late behind a
 *     slow queue is re-sent at most once per LOST_AFTER_MS, not at every sweep.
 */
export async function sweepOutbox(env: Env, now = Date.now()): Promise<number> {
  const db = createDb(env.DB);
  const lostBefore = now - LOST_AFTER_MS;
  const due = await db
    .select({ id: webhookDeliveries.id })
    .from(webhookDeliveries)
    .where(
      and(
        eq(webhookDeliveries.status, "pending"),
        lte(webhookDeliveries.nextAttemptAt, now),
        or(isNull(webhookDeliveries.claimedUntil), lt(webhookDeliveries.claimedUntil, now)),
        or(
          isNull(webhookDeliveries.enqueuedAt),
          isNotNull(webhookDeliveries.claimToken),
          and(lt(webhookDeliveries.enqueuedAt, lostBefore), lt(webhookDeliveries.nextAttemptAt, lostBefore)),
        ),
      ),
    )
    .limit(SWEEP_LIMIT);
  const ids = due.map((row) => row.id);
  if (ids.length === 0) return 0;
  await db.update(webhookDeliveries).set({ enqueuedAt: now, claimToken: null, claimedUntil: null }).where(inList(webhookDeliveries.id, ids));
  await handOver(db, env.DELIVERIES, ids);
  console.log(JSON.stringify({ type: "outbox_sweep", resent: ids.length }));
  return ids.length;
}
