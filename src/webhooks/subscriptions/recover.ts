import { and, between, eq, inArray, sql, type SQL } from "drizzle-orm";
import { runNamedBatch, type Db } from "../../db/client";
import { fixedLimit } from "../../db/fixed-limit";
import { deliveryStatusIs, webhookDeliveries } from "../../db/schema";
import { inAccount } from "../../db/scope";
import { invalid } from "../../errors";
import { UNKEYED, type Keyed, type KeyedWrite } from "../../idempotency";
import type { ServiceContext } from "../../context";
import { handOver } from "../outbox/outbox";
import { activeSubscription } from "./subscriptions";

export const MAX_RECOVERED = 10_000;
export const MAX_WINDOW_MS = 14 * 24 * 3600 * 1000;

/** Why a recovery window is refused, as field errors, or null. Pure. */
export function windowProblem(since: number, until: number): Record<string, string[]> | null {
  if (until < since) return { until: ["Ensure until is not before since."] };
  if (until - since > MAX_WINDOW_MS) return { since: ["Ensure the window from since to until spans at most 14 days."] };
  return null;
}

/**
 * Sends the subscription's failed deliveries created in [since, until] again (Svix's recover):
 * each goes back to `pending` with the same id and body and a fresh retry schedule, oldest first,
 * at most MAX_RECOVERED a call (call again for the rest: the recovered ones are no longer failed).
 * The answer `{recovered: n}` is stored in the same batch, counted by SQL.
 */
export async function recoverDeliveries(
  ctx: ServiceContext,
  subscriptionId: string,
  window: { since: number; until: number },
  keyed: KeyedWrite<SQL> = UNKEYED,
): Promise<Keyed<{ recovered: number }>> {
  const { db, accountId, queue } = ctx;
  const problem = windowProblem(window.since, window.until);
  if (problem) throw invalid(problem);
  await activeSubscription(db, accountId, subscriptionId);
  const now = Date.now();
  const batch = await runNamedBatch(db, {
    key: keyed.claim,
    recovered: sendFailedAgain(db, selectFailedIn(db, accountId, subscriptionId, window), now, keyed.owns),
    // changes(): the rows the update just changed, in this batch.
    answer: await keyed.answer(sql`json_object('recovered', changes())`),
  });
  const decided = keyed.decided(batch.key);
  if (decided) return { decided };
  await handOver(
    db,
    queue,
    batch.recovered.map((row) => row.id),
  );
  return { ran: { recovered: batch.recovered.length } };
}

/** The ids of the account's subscription's first MAX_RECOVERED failed deliveries created in the window, oldest first. */
export function selectFailedIn(db: Db, accountId: string, subscriptionId: string, window: { since: number; until: number }) {
  return db
    .select({ id: webhookDeliveries.id })
    .from(webhookDeliveries)
    .where(
      and(
        inAccount(webhookDeliveries, accountId),
        eq(webhookDeliveries.subscriptionId, subscriptionId),
        deliveryStatusIs("failed"),
        between(webhookDeliveries.createdAt, window.since, window.until),
      ),
    )
    .orderBy(webhookDeliveries.createdAt, webhookDeliveries.id)
    .limit(fixedLimit(MAX_RECOVERED));
}

/**
 * Makes the failed deliveries `failed` selects pending again, due now with a fresh schedule and
 * handed over, if `guard` holds; returns their ids. They go out when asked, whatever their
 * payment's order (outbox/order.ts).
 */
export function sendFailedAgain(db: Db, failed: ReturnType<typeof selectFailedIn>, now: number, guard: SQL) {
  return db
    .update(webhookDeliveries)
    .set({
      status: "pending",
      nextAttemptAt: now,
      scheduleStartedAt: null,
      enqueuedAt: now,
      leasedUntil: null,
      leaseToken: null,
      ordered: false,
      updatedAt: now,
    })
    .where(and(guard, inArray(webhookDeliveries.id, failed), deliveryStatusIs("failed")))
    .returning({ id: webhookDeliveries.id });
}
