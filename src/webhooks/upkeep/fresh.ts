import { and, eq, gt, inArray, isNotNull, isNull, lt, lte, or, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { fixedLimit } from "../../db/fixed-limit";
import { notHeldByMove } from "../../db/moving";
import { deliveryFresh, sweepMarks, webhookDeliveries, webhookSubscriptions } from "../../db/schema";
import type { ShardQueue } from "../outbox/message";
import { handOverAgain } from "../outbox/outbox";

/** How much of the logs one look reads: a minute of deliveries, across the shard's subscriptions. */
export const FRESH_WINDOW_MS = 60_000;
/** The most windows one sweep looks at: an hour of deliveries, so a sweeper that was stopped catches up an hour a run. */
export const FRESH_WINDOWS = 60;
const MARK = "fresh";

/**
 * The sweeper's look at deliveries handed over at their creation and never since ("fresh"), which
 * the due index leaves out so that a change and its happy path write no entry in it. A fresh
 * delivery whose message is lost is found on its subscription's log: every sweep reads the logs
 * from the shard's `fresh` mark up to `lostBefore` (LOST_AFTER_MS ago, or the restart), a window
 * at a time, re-sends the fresh deliveries there that no lease holds, and moves the mark past the
 * window. A re-sent delivery is handed over anew, so the due index holds it from then on. A stamp
 * is taken when its write starts and D1 ends a write long before LOST_AFTER_MS, so no delivery
 * lands behind the mark. A fresh delivery that a move holds is left alone, and the mark passes it:
 * the move hands it over from the shard it goes to, deletes it from the one it leaves, or, when
 * its cut-over fails, makes it due (services/moves). A fresh delivery under a lease that lapsed
 * (its worker died mid-attempt) is found on the leased index, wherever the mark is.
 */
export async function sweepFresh(
  db: Db,
  queue: ShardQueue,
  now: number,
  { lostBefore, leaseLapsedBefore, round, max }: { lostBefore: number; leaseLapsedBefore: number; round: number; max: number },
): Promise<number> {
  const d = webhookDeliveries;
  // Due (as a fresh delivery is from its creation) and under no live lease.
  const unleased = and(lte(d.nextAttemptAt, now), or(isNull(d.leasedUntil), lt(d.leasedUntil, leaseLapsedBefore)))!;
  const lost = and(deliveryFresh(), unleased, notHeldByMove(d.accountId))!;
  let resent = 0;
  // Leases that lapsed, on the leased index (only rows under a lease are in it).
  const lapsed = await db
    .select({ id: d.id })
    .from(d)
    .where(and(isNotNull(d.leasedUntil), lt(d.leasedUntil, leaseLapsedBefore), lost))
    .limit(fixedLimit(Math.min(round, max)));
  const relapsed = await handOverAgain(
    db,
    queue,
    lapsed.map((row) => row.id),
    lost,
    now,
  );
  if (relapsed === null) return 0;
  resent += relapsed;

  let from =
    (await db.select({ at: sweepMarks.at }).from(sweepMarks).where(eq(sweepMarks.name, MARK)).get())?.at ?? lostBefore - FRESH_WINDOW_MS * FRESH_WINDOWS;
  for (let window = 0; window < FRESH_WINDOWS && from < lostBefore && resent < max; window++) {
    const to = Math.min(from + FRESH_WINDOW_MS, lostBefore);
    // Rounds over the window until one reads it to its end: what a round re-sends is no longer fresh.
    for (;;) {
      const limit = Math.min(round, max - resent);
      const rows = await db
        .select({ id: d.id })
        .from(d)
        // Each subscription's log in the window, on the table's key (as retention reads it).
        .where(
          and(
            inArray(d.subscriptionId, db.select({ id: webhookSubscriptions.id }).from(webhookSubscriptions)),
            gt(d.createdAt, from),
            lte(d.createdAt, to),
            lost,
          ),
        )
        .limit(fixedLimit(limit));
      const sent = await handOverAgain(
        db,
        queue,
        rows.map((row) => row.id),
        lost,
        now,
      );
      if (sent === null) return resent; // the queue is down: the next sweep looks again from the mark
      resent += sent;
      if (rows.length < limit) break;
      // A full round: more may be left. Look again, unless the round sent none (all leased since
      // it read them) or the sweep's share is used up: the mark stays, and the next sweep looks again.
      if (sent === 0 || resent >= max) return resent;
    }
    await db
      .insert(sweepMarks)
      .values({ name: MARK, at: to })
      .onConflictDoUpdate({ target: sweepMarks.name, set: { at: sql`max(${sweepMarks.at}, excluded.at)` } });
    from = to;
  }
  return resent;
}
