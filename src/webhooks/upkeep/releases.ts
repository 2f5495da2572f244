/** The cron's job that goes on releasing what resumed subscriptions still hold (subscriptions/holds.ts). */
import { and, sql } from "drizzle-orm";
import { runNamedBatch, type Db } from "../../db/client";
import { fixedLimit } from "../../db/fixed-limit";
import { sendsSql, webhookDeliveries, webhookSubscriptions } from "../../db/schema";
import { handOver } from "../outbox/outbox";
import type { ShardQueue } from "../outbox/message";
import { inSequence, releaseHeld, settleAcked } from "../subscriptions/holds";

/** Subscriptions whose held deliveries one cron run goes on releasing, at most. */
export const RELEASING_AT_ONCE = 5;

/**
 * The cron's part of a resume, which settles and releases RELEASED_AT_ONCE: an active
 * subscription's held deliveries (found on the held index) are settled or released and handed to
 * the queue, RELEASED_AT_ONCE a subscription and RELEASING_AT_ONCE subscriptions a run. (A pause
 * needs no such part: what it did not hold, the consumer holds as its messages come.)
 */
export async function continueReleases(db: Db, queue: ShardQueue, now: number): Promise<{ released: number; subscriptions: number }> {
  const s = webhookSubscriptions;
  const holding = await db
    .select({ id: s.id, accountId: s.accountId })
    .from(s)
    .where(
      and(
        sql.raw(sendsSql(`"webhook_subscriptions"`)),
        sql`exists (select 1 from ${webhookDeliveries} h where h.subscription_id = ${s.id} and h.status = 'held')`,
      ),
    )
    .limit(fixedLimit(RELEASING_AT_ONCE));
  let released = 0;
  for (const { id, accountId } of holding) {
    const batch = await runNamedBatch(db, { settled: settleAcked(db, accountId, id, now), released: releaseHeld(db, accountId, id, now) });
    await handOver(db, queue, inSequence(batch.released));
    released += batch.released.length;
  }
  return { released, subscriptions: holding.length };
}
