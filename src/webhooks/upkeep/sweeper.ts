import { and, asc, gte, isNotNull, isNull, lt, lte, or } from "drizzle-orm";
import { fixedLimit } from "../../db/fixed-limit";
import { notHeldByMove } from "../../db/moving";
import type { Db } from "../../db/client";
import { deliveryDue, webhookDeliveries } from "../../db/schema";
import type { ShardQueue } from "../outbox/message";
import { lostAtRestart } from "./restart-sweep";
import { LEASE_MS } from "../wire/retry-schedule";
import { handOverAgain } from "../outbox/outbox";
import { sweepFresh } from "./fresh";

/** A due delivery handed to the queue this long ago and never leased is taken as lost. */
export const LOST_AFTER_MS = 2 * 60 * 1000;
/**
 * Rows re-sent per round, and the most one sweep re-sends: about what the consumer delivers in a
 * minute, so a queue outage's backlog is not held back by the sweeps' cadence. Locally it
 * delivers 1,100 to 1,800 a second (`npm run bench:backlog`): a sweep's 60,000 are taken well
 * before LOST_AFTER_MS would count any of them as lost again. (At 20,000 a sweep the consumer
 * stood idle most of each minute.)
 */
const SWEEP_ROUND = 500;
const SWEEP_MAX = 60_000;

/**
 * The cron trigger, on each shard: re-sends due deliveries whose message will not come, walking
 * the due index, then looks at those it leaves out, handed over at their creation and never since
 * (fresh.ts). The row tells which:
 *   - never handed over: the send after the commit failed;
 *   - leased, and the lease lapsed with no outcome recorded: the worker died mid-attempt (the
 *     log shows that attempt as never answered);
 *   - handed over and unleased for LOST_AFTER_MS since both its handover and its due time: the
 *     message is lost. Each re-send is a new handover, so a message that is only late behind a
 *     slow queue is re-sent at most once per LOST_AFTER_MS, not at every sweep.
 * `restartedAt` (the local service restarted then, and with it its in-memory queue and every
 * worker) takes every due pending delivery handed over or leased before that moment as lost at
 * once: the row is the truth. What the service handed over or leased since is its own and is
 * left alone (a lease wiped here let its attempt's outcome go unrecorded, and the delivery was
 * sent again: the soak's duplicates).
 */
export async function sweepOutbox(
  db: Db,
  queue: ShardQueue,
  now = Date.now(),
  { restartedAt, round = SWEEP_ROUND, max = SWEEP_MAX }: { restartedAt?: number; round?: number; max?: number } = {},
): Promise<number> {
  const lostBefore = now - LOST_AFTER_MS;
  const since = restartedAt === undefined ? undefined : Math.min(restartedAt, now);
  const lost = and(
    deliveryDue(),
    notHeldByMove(webhookDeliveries.accountId),
    lte(webhookDeliveries.nextAttemptAt, now),
    since !== undefined
      ? lostAtRestart(since, LEASE_MS)
      : and(
          or(isNull(webhookDeliveries.leasedUntil), lt(webhookDeliveries.leasedUntil, now)),
          or(
            isNull(webhookDeliveries.enqueuedAt),
            isNotNull(webhookDeliveries.leaseToken),
            and(lt(webhookDeliveries.enqueuedAt, lostBefore), lt(webhookDeliveries.nextAttemptAt, lostBefore)),
          ),
        ),
  )!;
  let resent = 0;
  // Rounds walk the due index in order from where the last one stopped, so a large backlog is
  // not read again from its start each round. Rows re-sent in a round are handed over at `now`,
  // so a row at the boundary that the next round reads again is not lost any more.
  let from: number | null = null;
  let queueDown = false;
  while (resent < max) {
    const due = await db
      .select({ id: webhookDeliveries.id, nextAttemptAt: webhookDeliveries.nextAttemptAt })
      .from(webhookDeliveries)
      .where(from === null ? lost : and(lost, gte(webhookDeliveries.nextAttemptAt, from)))
      .orderBy(asc(webhookDeliveries.nextAttemptAt))
      .limit(fixedLimit(Math.min(round, max - resent)));
    if (due.length === 0) break;
    from = due.at(-1)!.nextAttemptAt;
    const sent = await handOverAgain(
      db,
      queue,
      due.map((row) => row.id),
      lost,
      now,
    );
    if (sent === null) {
      queueDown = true; // the next sweep tries again
      break;
    }
    resent += sent;
    if (due.length < round) break;
  }
  // Deliveries handed over at their creation and never since are not in the due index (fresh.ts).
  if (!queueDown && resent < max) {
    resent += await sweepFresh(db, queue, now, {
      lostBefore: since ?? lostBefore,
      leaseLapsedBefore: since !== undefined ? since + LEASE_MS : now,
      round,
      max: max - resent,
    });
  }
  if (resent > 0) console.log(JSON.stringify({ type: "outbox_sweep", shard: queue.shard, resent, restarted: restartedAt !== undefined || undefined }));
  return resent;
}
