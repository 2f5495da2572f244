/**
 * What attempts leave on their subscriptions' rows, for recordAttempts' batch: the admission
 * rule's window (admission.ts), the failure streak (health.ts), the last attempt and success; and
 * after the batch, the back-offs of subscriptions the window says are hanging.
 */
import { eq, sql, type SQL } from "drizzle-orm";
import { runBatch, type Db } from "../../db/client";
import { webhookSubscriptions } from "../../db/schema";
import { HEALTH_WINDOW_MS, backoffAfter } from "./admission";
import { failuresAfter } from "./health";
import { endOf, type Attempted } from "./attempted";

/**
 * A subscription's state after its attempts among `attempted`, given the one of them that ended
 * last: the admission rule's window of timeouts and answers, its failure streak, its last attempt
 * and success; answers the window as it now stands (backOffHanging reads it).
 */
export function subscriptionState(db: Db, attempted: Attempted[], { delivery, result, outcome }: Attempted, recordedAt: number) {
  const lastSuccess = lastSuccessOf(attempted, delivery.subscriptionId);
  const ended = endingsOf(attempted, delivery.subscriptionId);
  const s = webhookSubscriptions;
  // The admission rule's window: a new one starts once the last is HEALTH_WINDOW_MS old.
  const stale = sql`(${s.recentSince} is null or ${s.recentSince} <= ${recordedAt - HEALTH_WINDOW_MS})`;
  return db
    .update(s)
    .set({
      recentTimeouts: sql`case when ${stale} then ${ended.timeouts} else ${s.recentTimeouts} + ${ended.timeouts} end`,
      recentAnswers: sql`case when ${stale} then ${ended.answers} else ${s.recentAnswers} + ${ended.answers} end`,
      recentSince: sql`case when ${stale} then ${recordedAt} else ${s.recentSince} end`,
      failingSince: outcome.failingSince,
      lastAttemptAt: sql`max(coalesce(${s.lastAttemptAt}, 0), ${result.startedAt})`,
      ...(lastSuccess !== null ? { lastSuccessAt: sql`max(coalesce(${s.lastSuccessAt}, 0), ${lastSuccess})` } : {}),
      consecutiveFailures: runOf(attempted, delivery.subscriptionId),
    })
    .where(eq(s.id, delivery.subscriptionId))
    .returning({ id: s.id, timeouts: s.recentTimeouts, answers: s.recentAnswers, since: s.recentSince });
}

/** When the latest successful attempt of a subscription among `attempted` started; null if none succeeded. */
function lastSuccessOf(attempted: Attempted[], subscriptionId: string): number | null {
  const starts = attempted
    .filter(({ delivery, outcome }) => delivery.subscriptionId === subscriptionId && outcome.status === "succeeded")
    .map(({ result }) => result.startedAt);
  return starts.length > 0 ? Math.max(...starts) : null;
}

/** How a subscription's attempts among `attempted` ended: timed out, or answered (any status). */
function endingsOf(attempted: Attempted[], subscriptionId: string): { timeouts: number; answers: number } {
  const own = attempted.filter(({ delivery }) => delivery.subscriptionId === subscriptionId);
  return { timeouts: own.filter(({ result }) => result.timedOut).length, answers: own.filter(({ result }) => result.responseStatus !== null).length };
}

/** A subscription's failed attempts since its last success, as SQL over its row, after `attempted` (health.ts). */
function runOf(attempted: Attempted[], subscriptionId: string): SQL {
  const own = attempted.filter(({ delivery }) => delivery.subscriptionId === subscriptionId).sort((a, b) => endOf(a) - endOf(b));
  const succeeded = own.map(({ outcome }) => outcome.status === "succeeded");
  return succeeded.includes(true) ? sql`${failuresAfter(0, succeeded)}` : sql`${webhookSubscriptions.consecutiveFailures} + ${succeeded.length}`;
}

export type Windows = { id: string; timeouts: number; answers: number; since: number | null }[];

/**
 * Backs off each subscription that the admission rule says is hanging now that these attempts
 * ended (backoffAfter); a back-off only ever moves later, so concurrent recorders agree.
 */
export async function backOffHanging(db: Db, windows: Windows[], attempted: Attempted[], now: number): Promise<void> {
  const backoffs = windows.flat().flatMap((health) => {
    const until = backoffAfter(health, endingsOf(attempted, health.id).timeouts > 0, now);
    return until === null ? [] : [{ id: health.id, until }];
  });
  if (backoffs.length === 0) return;
  await runBatch(
    db,
    backoffs.map(({ id, until }) =>
      db
        .update(webhookSubscriptions)
        .set({ backoffUntil: sql`max(coalesce(${webhookSubscriptions.backoffUntil}, 0), ${until})` })
        .where(eq(webhookSubscriptions.id, id)),
    ),
  );
  console.log(
    JSON.stringify({ type: "subscription_backed_off", subscriptions: backoffs.map(({ id, until }) => ({ id, backoff_until: new Date(until).toISOString() })) }),
  );
}
