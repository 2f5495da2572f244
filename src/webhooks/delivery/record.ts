import { and, eq, isNull, sql, type SQL } from "drizzle-orm";
import { runBatch, type BatchStatement, type Db } from "../../db/client";
import { webhookAttempts, webhookDeliveries, webhookSubscriptions } from "../../db/schema";
import type { AttemptResult } from "./attempt";
import type { DeliveryRow } from "./claim";
import type { ShardQueue } from "../outbox/message";
import { handOver } from "../outbox/outbox";
import type { Outcome } from "./outcome";
import { queueDelay } from "../wire/retry-schedule";
import { statsRows, statsStatements } from "../subscriptions/stats";
import { jsonColumn, jsonRows } from "../../db/json-rows";
import { storedHeaders } from "../wire/sent-headers";
import { HEALTH_WINDOW_MS, holdAfter } from "./admission";
import { holdPending } from "../subscriptions/holds";
import { failuresAfter, FAILING_AFTER_ATTEMPTS, FAILING_AFTER_MS, healthDeliveries, type HealthEvent } from "./health";

/** When the latest successful attempt of a subscription among `attempted` started; null if none succeeded. */
function lastSuccessOf(attempted: Attempted[], subscriptionId: string): number | null {
  const starts = attempted.filter(({ delivery, outcome }) => delivery.subscriptionId === subscriptionId && outcome.status === "succeeded").map(({ result }) => result.startedAt);
  return starts.length > 0 ? Math.max(...starts) : null;
}

/** How a subscription's attempts among `attempted` ended: timed out, or answered (any status). */
function endingsOf(attempted: Attempted[], subscriptionId: string): { timeouts: number; answers: number } {
  const own = attempted.filter(({ delivery }) => delivery.subscriptionId === subscriptionId);
  return { timeouts: own.filter(({ result }) => result.timedOut).length, answers: own.filter(({ result }) => result.responseStatus !== null).length };
}

type Windows = { id: string; timeouts: number; answers: number; since: number | null }[];

/**
 * Holds back each subscription that the admission rule says is hanging now that these attempts
 * ended (holdAfter); a hold only ever moves later, so concurrent recorders agree.
 */
async function holdHanging(db: Db, windows: Windows[], attempted: Attempted[], now: number): Promise<void> {
  const holds = windows.flat().flatMap((health) => {
    const until = holdAfter(health, endingsOf(attempted, health.id).timeouts > 0, now);
    return until === null ? [] : [{ id: health.id, until }];
  });
  if (holds.length === 0) return;
  await runBatch(
    db,
    holds.map(({ id, until }) =>
      db
        .update(webhookSubscriptions)
        .set({ heldUntil: sql`max(coalesce(${webhookSubscriptions.heldUntil}, 0), ${until})` })
        .where(eq(webhookSubscriptions.id, id)),
    ),
  );
  console.log(JSON.stringify({ type: "subscription_held", subscriptions: holds.map(({ id, until }) => ({ id, held_until: new Date(until).toISOString() })) }));
}

export interface Attempted {
  delivery: DeliveryRow;
  result: AttemptResult;
  outcome: Outcome;
}

/**
 * Records a set of attempts in one batch: every attempt's outcome on the row its claim started
 * (gone if the delivery was deleted meanwhile), every delivery's new state (only under the claim
 * that made the attempt: a redelivery asked for meanwhile stands), and each subscription's
 * failure streak as its latest attempt left it. Then hands the deliveries to retry to the queue
 * with their delays; if that send fails, their rows say so and the sweeper sends them when due.
 */
export async function recordAttempts(db: Db, queue: ShardQueue, attempted: Attempted[]): Promise<void> {
  if (attempted.length === 0) return;
  const recordedAt = Date.now();
  const latest = new Map<string, Attempted>();
  for (const item of [...attempted].sort((a, b) => a.result.startedAt + a.result.durationMs - (b.result.startedAt + b.result.durationMs))) {
    latest.set(item.delivery.subscriptionId, item);
  }
  // One row of values per attempt, read in SQL through json_each: two statements for all the
  // attempts, and one per subscription.
  const values = JSON.stringify(
    attempted.map(({ delivery, result, outcome }) => {
      const end = result.startedAt + result.durationMs;
      return {
        id: delivery.id,
        claimToken: delivery.claimToken,
        number: outcome.number,
        startedAt: result.startedAt,
        durationMs: result.durationMs,
        responseStatus: result.responseStatus,
        error: result.error,
        excerpt: result.excerpt,
        headers: storedHeaders(result.headers),
        status: outcome.status,
        scheduleStartedAt: outcome.scheduleStartedAt,
        scheduleFirstAttempt: outcome.scheduleFirstAttempt,
        nextAttemptAt: outcome.retryInSeconds === null ? null : Math.round(end + outcome.retryInSeconds * 1000),
        enqueuedAt: outcome.retryInSeconds === null ? delivery.enqueuedAt : end,
        updatedAt: end,
      };
    }),
  );
  // The attempts' values, read as a table `v` (jsonRows) in the two updates below.
  const v = jsonColumn;
  // A retry of a subscription paused or deactivated meanwhile is held instead (holds.ts).
  const pausedRetry = sql`(${v("status")} = 'pending' and coalesce((select s.is_active from ${webhookSubscriptions} s where s.id = "webhook_deliveries"."subscription_id"), 0) = 0)`;
  // A first attempt's outcome goes on its delivery's row, when the claim started it there: each
  // first-attempt column takes its value, or keeps its own.
  const onRow = sql`(${v("number")} = 1 and ${webhookDeliveries.firstStartedAt} is not null)`;
  const firstOutcome = Object.fromEntries(
    Object.entries(FIRST_ATTEMPT_VALUES).map(([column, value]) => [
      column,
      sql`case when ${onRow} then ${value === null ? sql`1` : v(value)} else ${webhookDeliveries[column as keyof typeof FIRST_ATTEMPT_VALUES]} end`,
    ]),
  );
  const attemptColumns = ["number", ...Object.values(FIRST_ATTEMPT_VALUES).filter((value) => value !== null)] as const;
  const statements: BatchStatement[] = [
    // Each later attempt's outcome, on the row the claim wrote when it started.
    db
      .update(webhookAttempts)
      .set({
        startedAt: v("startedAt"),
        durationMs: v("durationMs"),
        responseStatus: v("responseStatus"),
        error: v("error"),
        responseExcerpt: v("excerpt"),
        headers: v("headers"),
        ended: 1,
      })
      .from(jsonRows(values, "id", "number", "startedAt", "durationMs", "responseStatus", "error", "excerpt", "headers"))
      .where(and(eq(webhookAttempts.deliveryId, v("id")), eq(webhookAttempts.number, v("number")))),
    db
      .update(webhookDeliveries)
      .set({
        status: sql`case when ${pausedRetry} then 'held' else ${v("status")} end`,
        scheduleStartedAt: v("scheduleStartedAt"),
        scheduleFirstAttempt: v("scheduleFirstAttempt"),
        nextAttemptAt: sql`case when ${pausedRetry} then null else ${v("nextAttemptAt")} end`,
        enqueuedAt: sql`case when ${pausedRetry} then null else ${v("enqueuedAt")} end`,
        claimedUntil: null,
        claimToken: null,
        updatedAt: v("updatedAt"),
        ...firstOutcome,
      })
      .from(jsonRows(values, "id", "claimToken", "status", "scheduleStartedAt", "scheduleFirstAttempt", "nextAttemptAt", "enqueuedAt", "updatedAt", ...attemptColumns))
      .where(and(eq(webhookDeliveries.id, v("id")), eq(webhookDeliveries.claimToken, v("claimToken"))))
      .returning({ id: webhookDeliveries.id, status: webhookDeliveries.status }),
    ...[...latest.values()].map(({ delivery, result, outcome }) => {
      const lastSuccess = lastSuccessOf(attempted, delivery.subscriptionId);
      const ended = endingsOf(attempted, delivery.subscriptionId);
      // The admission rule's window: a new one starts once the last is HEALTH_WINDOW_MS old.
      const stale = sql`(${webhookSubscriptions.recentSince} is null or ${webhookSubscriptions.recentSince} <= ${recordedAt - HEALTH_WINDOW_MS})`;
      return db
        .update(webhookSubscriptions)
        .set({
          recentTimeouts: sql`case when ${stale} then ${ended.timeouts} else ${webhookSubscriptions.recentTimeouts} + ${ended.timeouts} end`,
          recentAnswers: sql`case when ${stale} then ${ended.answers} else ${webhookSubscriptions.recentAnswers} + ${ended.answers} end`,
          recentSince: sql`case when ${stale} then ${recordedAt} else ${webhookSubscriptions.recentSince} end`,
          failingSince: outcome.failingSince,
          lastAttemptAt: sql`max(coalesce(${webhookSubscriptions.lastAttemptAt}, 0), ${result.startedAt})`,
          ...(lastSuccess !== null ? { lastSuccessAt: sql`max(coalesce(${webhookSubscriptions.lastSuccessAt}, 0), ${lastSuccess})` } : {}),
          consecutiveFailures: runOf(attempted, delivery.subscriptionId),
        })
        .where(eq(webhookSubscriptions.id, delivery.subscriptionId))
        .returning({ id: webhookSubscriptions.id, timeouts: webhookSubscriptions.recentTimeouts, answers: webhookSubscriptions.recentAnswers, since: webhookSubscriptions.recentSince });
    }),
    // The subscriptions' health buckets (stats.ts).
    ...statsStatements(
      db,
      statsRows(attempted.map(({ delivery, result, outcome }) => ({ subscriptionId: delivery.subscriptionId, startedAt: result.startedAt, durationMs: result.durationMs, status: outcome.status }))),
    ),
  ];
  // A first attempt whose claim a redelivery replaced meanwhile: its outcome is still logged.
  statements.push(
    db
      .update(webhookDeliveries)
      .set(firstOutcome)
      .from(jsonRows(values, "id", ...attemptColumns))
      .where(and(eq(webhookDeliveries.id, v("id")), onRow, sql`${webhookDeliveries.firstEnded} = 0`)),
  );
  // A subscription deactivated by these attempts holds its other pending deliveries at once.
  for (const { delivery, outcome } of latest.values()) if (outcome.deactivate) statements.push(holdPending(db, delivery.accountId, delivery.subscriptionId, recordedAt));
  // What health subscriptions are told of it (health.ts), each pair at its own place in the batch.
  const told = healthStatements(db, attempted, latest, recordedAt);
  const toldFrom = statements.length;
  statements.push(...told);
  const results = (await runBatch(db, statements)) as unknown[];
  const healthIds = results.slice(toldFrom).flatMap((rows) => (Array.isArray(rows) ? (rows as { id?: string; status?: string }[]) : []).filter((row) => row.status === "pending").map((row) => row.id!));
  // Still this attempt's to retry: recorded under its claim (a redelivery asked for meanwhile has its own message) and not held.
  const held = new Set((results[1] as { id: string; status: string }[]).filter((row) => row.status === "pending").map((row) => row.id));
  await holdHanging(db, results.slice(2, 2 + latest.size) as Windows[], attempted, recordedAt);
  for (const { delivery, result, outcome } of attempted) {
    console.log(
      JSON.stringify({
        type: "delivery_attempt",
        delivery_id: delivery.id,
        subscription_id: delivery.subscriptionId,
        number: outcome.number,
        outcome: outcome.status,
        response_status: result.responseStatus,
        duration_ms: result.durationMs,
        error: result.error,
        next_attempt_in_s: outcome.retryInSeconds,
        deactivated: outcome.deactivate || undefined,
      }),
    );
  }
  // A delivery redelivered mid-attempt already has its message: no retry of this attempt's.
  const retries = attempted.filter(({ delivery, outcome }) => outcome.retryInSeconds !== null && held.has(delivery.id));
  await handOver(db, queue, [...retries.map(({ delivery, outcome }) => ({ id: delivery.id, delaySeconds: queueDelay(outcome.retryInSeconds!) })), ...healthIds]);
}

/** Each first-attempt column of a delivery row and the attempt's value it records (null: `first_ended`, set to 1). */
const FIRST_ATTEMPT_VALUES = {
  firstStartedAt: "startedAt",
  firstDurationMs: "durationMs",
  firstResponseStatus: "responseStatus",
  firstError: "error",
  firstResponseExcerpt: "excerpt",
  firstHeaders: "headers",
  firstEnded: null,
} as const;

/** A subscription's failed attempts since its last success, as SQL over its row, after `attempted` (health.ts). */
function runOf(attempted: Attempted[], subscriptionId: string): SQL {
  const own = attempted.filter(({ delivery }) => delivery.subscriptionId === subscriptionId).sort((a, b) => endOf(a) - endOf(b));
  const succeeded = own.map(({ outcome }) => outcome.status === "succeeded");
  return succeeded.includes(true) ? sql`${failuresAfter(0, succeeded)}` : sql`${webhookSubscriptions.consecutiveFailures} + ${succeeded.length}`;
}

const endOf = ({ result }: Attempted) => result.startedAt + result.durationMs;

/**
 * The statements that make each subscription's health transitions and tell health subscriptions
 * of them, once: disabled (a 410 or 5 days of failures), each delivery that ran out of retries,
 * failing (an hour, or FAILING_AFTER_ATTEMPTS failures in a row) and recovered. Each is a guarded
 * update of the subscription and, right after it, the event's rows under `changes() = 1`.
 */
function healthStatements(db: Db, attempted: Attempted[], latest: Map<string, Attempted>, now: number): BatchStatement[] {
  const s = webhookSubscriptions;
  const out: BatchStatement[] = [];
  const tell = (accountId: string, event: HealthEvent, when: SQL = sql`changes() = 1`) => out.push(healthDeliveries(db, accountId, event, when, now));
  for (const { delivery, result, outcome } of latest.values()) {
    const { accountId, subscriptionId } = delivery;
    const ofRow = eq(s.id, subscriptionId);
    if (outcome.deactivate) {
      out.push(db.update(s).set({ isActive: false, updatedAt: endOf({ delivery, result, outcome }) }).where(and(ofRow, eq(s.isActive, true))));
      tell(accountId, { event: "subscription.disabled", subscriptionId, at: now, detail: { reason: result.responseStatus === 410 ? "gone" : "failing" } });
    }
    // Failing can only start with a failure among these attempts, and recovery with a success.
    const own = attempted.filter((item) => item.delivery.subscriptionId === subscriptionId);
    if (own.some((item) => item.outcome.status !== "succeeded")) {
      out.push(
        db
          .update(s)
          .set({ failingReported: true })
          .where(and(ofRow, eq(s.failingReported, false), sql`(${s.consecutiveFailures} >= ${FAILING_AFTER_ATTEMPTS} or ${s.failingSince} <= ${now - FAILING_AFTER_MS})`)),
      );
      tell(accountId, { event: "subscription.failing", subscriptionId, at: now, detail: { failing_since: outcome.failingSince === null ? null : new Date(outcome.failingSince).toISOString() } });
    }
    if (own.some((item) => item.outcome.status === "succeeded")) {
      out.push(db.update(s).set({ failingReported: false }).where(and(ofRow, eq(s.failingReported, true), isNull(s.failingSince))));
      tell(accountId, { event: "subscription.recovered", subscriptionId, at: now, detail: {} });
    }
  }
  // A delivery that ran out of retries (a 410 disables instead), once: its row ended as failed under this attempt.
  for (const item of attempted) {
    const { delivery, result, outcome } = item;
    if (outcome.status !== "failed" || result.responseStatus === 410) continue;
    const ended = sql`exists (select 1 from ${webhookDeliveries} x where x.id = ${delivery.id} and x.status = 'failed' and x.updated_at = ${endOf(item)} and x.claim_token is null)`;
    tell(delivery.accountId, { event: "delivery.exhausted", subscriptionId: delivery.subscriptionId, at: now, detail: { delivery_id: delivery.id, payment_id: delivery.paymentId } }, ended);
  }
  return out;
}
