import { and, eq, isNull, lt, lte, or } from "drizzle-orm";
import { createDb } from "../db/client";
import { webhookDeliveries } from "../db/schema";
import type { Env } from "../env";
import { handOver } from "./outbox";

/** A due delivery whose queue message should have run by now is taken as lost after this long. */
export const LOST_AFTER_MS = 2 * 60 * 1000;
const SWEEP_LIMIT = 500;

/**
 * The cron trigger: re-sends deliveries that are due and were never handed to the queue (the send
 * after the commit failed), or were handed over and are overdue (the message was lost).
 */
export async function sweepOutbox(env: Env, now = Date.now()): Promise<number> {
  const db = createDb(env.DB);
  const due = await db
    .select({ id: webhookDeliveries.id })
    .from(webhookDeliveries)
    .where(
      and(
        eq(webhookDeliveries.status, "pending"),
        lte(webhookDeliveries.nextAttemptAt, now),
        or(isNull(webhookDeliveries.enqueuedAt), lt(webhookDeliveries.nextAttemptAt, now - LOST_AFTER_MS)),
        or(isNull(webhookDeliveries.claimedUntil), lt(webhookDeliveries.claimedUntil, now)),
      ),
    )
    .limit(SWEEP_LIMIT);
  const ids = due.map((row) => row.id);
  if (ids.length === 0) return 0;
  await handOver(db, env.DELIVERIES, ids, true);
  console.log(JSON.stringify({ type: "outbox_sweep", resent: ids.length }));
  return ids.length;
}
