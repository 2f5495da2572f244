import { and, eq, isNull, lt, lte, or } from "drizzle-orm";
import { createDb, type Db } from "../db/client";
import { webhookAttempts, webhookDeliveries, webhookSubscriptions } from "../db/schema";
import type { Env } from "../env";
import { refuseWebhookUrl } from "../lib/url-policy";
import { reveal, UNREADABLE } from "../services/webhook-subscriptions";
import { attemptDelivery, ATTEMPT_TIMEOUT_MS, type AttemptResult } from "./attempt";
import type { DeliveryMessage } from "./message";
import { nextRetryDelay, parseRetryAfter, queueDelay } from "./retry-schedule";

const CLAIM_MS = ATTEMPT_TIMEOUT_MS + 45_000;
/** A message that arrives this close to its attempt's due time is taken as on time. */
const EARLY_SLACK_MS = 1000;
const DEACTIVATE_AFTER_FAILING_MS = 5 * 24 * 3600 * 1000;
/** When the consumer itself fails (D1 down, bad configuration), the message comes back this much later. */
const ERROR_RETRY_SECONDS = 30;

export type Outcome = { kind: "ack" } | { kind: "retry"; delaySeconds: number };

/** The queue consumer: each message is acked or retried explicitly, never left to chance. */
export async function consumeDeliveries(batch: MessageBatch<DeliveryMessage>, env: Env): Promise<void> {
  const db = createDb(env.DB);
  await Promise.all(
    batch.messages.map(async (message) => {
      let outcome: Outcome;
      try {
        outcome = await processDelivery(db, env, message.body.delivery_id);
      } catch (error) {
        console.error(JSON.stringify({ type: "delivery_error", delivery_id: message.body?.delivery_id, error: String(error) }));
        outcome = { kind: "retry", delaySeconds: ERROR_RETRY_SECONDS };
      }
      if (outcome.kind === "ack") message.ack();
      else message.retry({ delaySeconds: outcome.delaySeconds });
    }),
  );
}

/** Makes the attempt that is due for one delivery, records it, and says what to do with the message. */
export async function processDelivery(db: Db, env: Env, deliveryId: string, fetcher: typeof fetch = fetch): Promise<Outcome> {
  const now = Date.now();
  // Claim the delivery if it is pending, due and not held by another copy of this message.
  const [delivery] = await db
    .update(webhookDeliveries)
    .set({ claimedUntil: now + CLAIM_MS })
    .where(
      and(
        eq(webhookDeliveries.id, deliveryId),
        eq(webhookDeliveries.status, "pending"),
        lte(webhookDeliveries.nextAttemptAt, now + EARLY_SLACK_MS),
        or(isNull(webhookDeliveries.claimedUntil), lt(webhookDeliveries.claimedUntil, now)),
      ),
    )
    .returning();
  if (!delivery) {
    const current = await db
      .select({ status: webhookDeliveries.status, nextAttemptAt: webhookDeliveries.nextAttemptAt })
      .from(webhookDeliveries)
      .where(eq(webhookDeliveries.id, deliveryId))
      .get();
    if (current?.status === "pending" && current.nextAttemptAt !== null && current.nextAttemptAt > now + EARLY_SLACK_MS) {
      // Early: a wait longer than the queue's maximum delay is reached in several hops.
      return { kind: "retry", delaySeconds: queueDelay((current.nextAttemptAt - now) / 1000) };
    }
    return { kind: "ack" }; // dropped, already ended (never sent twice), or another copy is on it
  }

  const row = await db.select().from(webhookSubscriptions).where(eq(webhookSubscriptions.id, delivery.subscriptionId)).get();
  if (!row || !row.isActive) {
    await endDelivery(db, deliveryId, "failed", now);
    return { kind: "ack" };
  }
  const { revealed } = await reveal(row, env.ENCRYPTION_KEY, now);
  const policy = revealed && refuseWebhookUrl(row.url, env.ALLOW_LOCAL_WEBHOOK_URLS === "true");
  const refusal = !revealed ? UNREADABLE : policy ? `URL refused: ${policy}` : null;
  const result: AttemptResult = !revealed || refusal
    ? { startedAt: now, durationMs: 0, responseStatus: null, error: refusal, excerpt: null, retryAfter: null }
    : await attemptDelivery(
        {
          url: row.url,
          body: delivery.body,
          contentType: delivery.contentType,
          deliveryId,
          subscriptionId: row.id,
          username: revealed.username,
          password: revealed.password,
          secrets: { current: revealed.secretText, previous: revealed.previousSecretText },
        },
        fetcher,
      );

  const number = delivery.attempts + 1;
  const ok = result.responseStatus !== null && result.responseStatus >= 200 && result.responseStatus < 300;
  const gone = result.responseStatus === 410;
  const end = Date.now();
  const retryAfter =
    result.responseStatus === 429 || result.responseStatus === 503 ? parseRetryAfter(result.retryAfter, end) : null;
  const delay = ok || gone
    ? null
    : nextRetryDelay({ attempts: number, scheduleStartedAt: delivery.scheduleStartedAt ?? result.startedAt, now: end, retryAfterSeconds: retryAfter, random: Math.random });
  const status = ok ? "succeeded" : delay === null ? "failed" : "pending";
  const failingSince = ok ? null : (row.failingSince ?? end);
  const deactivate = gone || (!ok && end - failingSince! >= DEACTIVATE_AFTER_FAILING_MS);

  await db.batch([
    db.insert(webhookAttempts).values({
      deliveryId,
      number,
      startedAt: result.startedAt,
      durationMs: result.durationMs,
      responseStatus: result.responseStatus,
      error: result.error,
      responseExcerpt: result.excerpt,
    }),
    db
      .update(webhookDeliveries)
      .set({
        status,
        attempts: number,
        scheduleStartedAt: delivery.scheduleStartedAt ?? result.startedAt,
        nextAttemptAt: delay === null ? null : end + delay * 1000,
        enqueuedAt: delay === null ? delivery.enqueuedAt : end,
        claimedUntil: null,
        updatedAt: end,
      })
      .where(eq(webhookDeliveries.id, deliveryId)),
    db
      .update(webhookSubscriptions)
      .set({ failingSince, ...(deactivate ? { isActive: false, updatedAt: end } : {}) })
      .where(eq(webhookSubscriptions.id, row.id)),
  ]);
  console.log(
    JSON.stringify({
      type: "delivery_attempt",
      delivery_id: deliveryId,
      subscription_id: row.id,
      number,
      outcome: status,
      response_status: result.responseStatus,
      duration_ms: result.durationMs,
      error: result.error,
      next_attempt_in_s: delay,
      deactivated: deactivate || undefined,
    }),
  );
  return delay === null ? { kind: "ack" } : { kind: "retry", delaySeconds: queueDelay(delay) };
}

/** Ends a delivery without an attempt (its subscription is gone or inactive, or it was dead-lettered). */
export async function endDelivery(db: Db, deliveryId: string, status: "failed", now = Date.now()): Promise<void> {
  await db
    .update(webhookDeliveries)
    .set({ status, nextAttemptAt: null, claimedUntil: null, updatedAt: now })
    .where(and(eq(webhookDeliveries.id, deliveryId), eq(webhookDeliveries.status, "pending")));
}

/** The dead-letter queue's consumer: a message that ran out of queue retries marks its delivery failed. */
export async function consumeDeadLetters(batch: MessageBatch<DeliveryMessage>, env: Env): Promise<void> {
  const db = createDb(env.DB);
  for (const message of batch.messages) {
    try {
      await endDelivery(db, message.body.delivery_id, "failed");
      console.error(JSON.stringify({ type: "delivery_dead_lettered", delivery_id: message.body.delivery_id }));
      message.ack();
    } catch (error) {
      console.error(JSON.stringify({ type: "dead_letter_error", error: String(error) }));
      message.retry({ delaySeconds: ERROR_RETRY_SECONDS });
    }
  }
}

