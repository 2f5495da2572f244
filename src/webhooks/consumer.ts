/**
 * The delivery queue's consumer, in four stages over a whole batch:
 *   claim   (claim.ts)    one round trip claims every due delivery and reads their subscriptions;
 *   attempt (attempt.ts)  each claimed delivery is signed and POSTed, all at once;
 *   outcome (outcome.ts)  a pure decision per attempt: succeeded, retry in n seconds, or failed;
 *   record  (record.ts)   one batch records the attempts that ended together, and retries are
 *                         handed to the queue with their delays.
 * The row is the truth: a message is acked once its delivery is claimed, and the attempt goes on
 * in the background (waitUntil; the queue does not wait for it, see wrangler.toml's
 * compatibility flag), so a receiver that hangs holds only its own attempts (in-flight.ts), never
 * the batch behind it. If the isolate dies mid-attempt, the claim lapses and the sweeper re-sends.
 */
import { and, eq } from "drizzle-orm";
import { createDb, runBatch, type Db } from "../db/client";
import { shardBinding } from "../db/shards";
import { groupBy } from "../lib/group-by";
import { webhookAttempts, webhookDeliveries } from "../db/schema";
import type { Env } from "../env";
import { retryTimeScale } from "../lib/local-faults";
import { refuseWebhookUrl } from "../lib/url-policy";
import { UNREADABLE } from "./subscriptions";
import { attemptDelivery, type AttemptResult } from "./attempt";
import { claimDeliveries, type DeliveryRow, type SubscriptionRow } from "./claim";
import * as inFlight from "./in-flight";
import type { DeliveryMessage, ShardQueue } from "./message";
import { openSecrets } from "./opened-secrets";
import { handOver } from "./outbox";
import { gather } from "./gather";
import { decideOutcome } from "./outcome";
import { recordAttempts, type Attempted } from "./record";

/** When the consumer itself fails (D1 down, bad configuration), the message comes back this much later. */
const ERROR_RETRY_SECONDS = 30;
/** When no ENCRYPTION_KEY can open any secret, a claimed delivery comes back this much later. */
export const NOT_CONFIGURED_RETRY_SECONDS = 60;

type Started = { delivery: DeliveryRow; subscription: SubscriptionRow };

/**
 * A batch may hold deliveries of several shards (each message names its own): each shard's are
 * claimed on that shard, at once. A message whose shard the configuration lacks comes back later
 * (nothing is lost while the binding is restored); one without a shard is acked, and its shard's
 * sweeper sends the row again.
 */
export async function consumeDeliveries(batch: MessageBatch<DeliveryMessage>, env: Env, ctx: ExecutionContext): Promise<void> {
  const byShard = groupBy(batch.messages, (message) => (typeof message.body?.shard === "string" ? message.body.shard : ""));
  await Promise.all([...byShard].map(([shard, messages]) => consumeShard(shard, messages, env, ctx)));
  await inFlight.room();
}

async function consumeShard(shard: string, messages: readonly Message<DeliveryMessage>[], env: Env, ctx: ExecutionContext): Promise<void> {
  const binding = shardBinding(env, shard);
  if (!binding) {
    console.error(JSON.stringify({ type: "shard_not_configured", shard, delivery_ids: messages.map((message) => message.body?.delivery_id) }));
    for (const message of messages) {
      if (shard === "") message.ack();
      else message.retry({ delaySeconds: ERROR_RETRY_SECONDS });
    }
    return;
  }
  const db = createDb(binding);
  const queue: ShardQueue = { queue: env.DELIVERIES, shard };
  const now = Date.now();
  const ids = [...new Set(messages.map((message) => message.body?.delivery_id).filter((id) => typeof id === "string"))];
  let claims;
  try {
    claims = await claimDeliveries(db, ids, now);
  } catch (error) {
    console.error(JSON.stringify({ type: "delivery_error", shard, delivery_ids: ids, error: String(error) }));
    for (const message of messages) message.retry({ delaySeconds: ERROR_RETRY_SECONDS });
    return;
  }

  const started: Started[] = [];
  const ended: string[] = [];
  for (const message of messages) {
    const claim = claims.get(message.body?.delivery_id);
    claims.delete(message.body?.delivery_id); // a second copy in the batch finds it taken
    if (claim?.kind === "early") {
      message.retry({ delaySeconds: claim.delaySeconds });
      continue;
    }
    if (claim?.kind === "claimed") {
      const { delivery, subscription } = claim;
      if (!subscription || !subscription.isActive) ended.push(delivery.id);
      else started.push({ delivery, subscription });
    }
    message.ack();
  }
  const work = Promise.all([deliverAll(db, queue, env, started), endDeliveries(db, ended, now)]).catch((error) =>
    console.error(JSON.stringify({ type: "delivery_error", shard, error: String(error) })),
  );
  ctx.waitUntil(work);
}

/**
 * Attempts every claimed delivery as its subscription's in-flight limit allows, recording those
 * that end close together in one batch; a slow subscription's deliveries are put off instead.
 */
async function deliverAll(db: Db, queue: ShardQueue, env: Env, started: Started[]): Promise<void> {
  const logFailure = (ids: string[], error: unknown) =>
    // Left claimed: the claim lapses and the sweeper sends them again.
    console.error(JSON.stringify({ type: "delivery_error", delivery_ids: ids, error: String(error) }));
  const records = gather<Attempted>((items) => recordAttempts(db, queue, items), (items, error) => logFailure(items.map((item) => item.delivery.id), error));
  const deferrals = gather<Deferral>((items) => putOff(db, queue, items, Date.now()), (items, error) => logFailure(items.map((item) => item.delivery.id), error));
  await Promise.all(
    started.map(async ({ delivery, subscription }) => {
      const slot = inFlight.take(subscription.id);
      if (!slot) {
        deferrals.add({ delivery, delaySeconds: inFlight.deferral(subscription.id) });
        return;
      }
      let result: AttemptResult;
      try {
        result = await attempt(delivery, subscription, env);
      } catch (error) {
        // No usable ENCRYPTION_KEY at all (logged as a config_error): nothing was sent, so the
        // claim and its counted attempt are given back, and the delivery comes back in a minute,
        // its retry schedule untouched, until the key is deployed.
        inFlight.release(slot);
        console.error(JSON.stringify({ type: "delivery_put_off", delivery_id: delivery.id, retry_in_s: NOT_CONFIGURED_RETRY_SECONDS, error: String(error) }));
        deferrals.add({ delivery, delaySeconds: NOT_CONFIGURED_RETRY_SECONDS });
        return;
      }
      inFlight.release(slot, Date.now(), result.responseStatus !== null ? "answered" : result.timedOut ? "timed_out" : "other");
      if (result.responseStatus !== null) inFlight.answered(result.durationMs);
      const outcome = decideOutcome({
        attempts: delivery.attempts - 1, // the claim counted this one
        scheduleStartedAt: delivery.scheduleStartedAt,
        scheduleFirstAttempt: delivery.scheduleFirstAttempt,
        failingSince: subscription.failingSince,
        responseStatus: result.responseStatus,
        retryAfter: result.retryAfter,
        startedAt: result.startedAt,
        endedAt: result.startedAt + result.durationMs,
        random: Math.random,
        scale: retryTimeScale(env),
      });
      // A hanging subscription's retry waits its turn behind its limit, as its put-off deliveries
      // do, rather than come back in the wave of its timeouts only to be put off again.
      const retryInSeconds = outcome.retryInSeconds === null ? null : Math.max(inFlight.retryTurn(subscription.id), outcome.retryInSeconds);
      records.add({ delivery, result, outcome: { ...outcome, retryInSeconds } });
    }),
  );
  await Promise.all([records.done(), deferrals.done()]);
}

/** One signed POST, or a failed attempt without one when the secrets cannot be opened or the URL is refused. */
async function attempt(delivery: DeliveryRow, subscription: SubscriptionRow, env: Env): Promise<AttemptResult> {
  const now = Date.now();
  const revealed = await openSecrets(subscription, env.ENCRYPTION_KEY, now);
  const policy = revealed && refuseWebhookUrl(subscription.url, env.ALLOW_LOCAL_WEBHOOK_URLS === "true");
  const refusal = !revealed ? UNREADABLE : policy ? `URL refused: ${policy}` : null;
  if (!revealed || refusal) return { startedAt: now, durationMs: 0, responseStatus: null, timedOut: false, error: refusal, excerpt: null, retryAfter: null, headers: null };
  return attemptDelivery({
    url: subscription.url,
    body: delivery.body,
    contentType: delivery.contentType,
    deliveryId: delivery.id,
    subscriptionId: subscription.id,
    username: revealed.username,
    password: revealed.password,
    secrets: { current: revealed.secretText, previous: revealed.previousSecretText },
  });
}

/** Deliveries whose subscription is gone or paused end without an attempt. */
async function endDeliveries(db: Db, ids: string[], now: number): Promise<void> {
  await runBatch(db, ids.map((id) => endStatement(db, id, now)));
}

/** A delivery given back unattempted, to come back in `delaySeconds`. */
type Deferral = { delivery: DeliveryRow; delaySeconds: number };

/**
 * Deliveries given back unattempted (a slow subscription's, or all of them while no key opens the
 * secrets) come back later, unclaimed, with the attempt their claim counted taken back (nothing
 * was sent).
 */
async function putOff(db: Db, queue: ShardQueue, items: Deferral[], now: number): Promise<void> {
  await runBatch(
    db,
    items.flatMap(({ delivery, delaySeconds }) => [
      db
        .delete(webhookAttempts)
        .where(and(eq(webhookAttempts.deliveryId, delivery.id), eq(webhookAttempts.number, delivery.attempts), eq(webhookAttempts.ended, 0))),
      db
        .update(webhookDeliveries)
        .set({ nextAttemptAt: now + delaySeconds * 1000, enqueuedAt: now, claimedUntil: null, claimToken: null, attempts: delivery.attempts - 1 })
        .where(and(eq(webhookDeliveries.id, delivery.id), eq(webhookDeliveries.claimToken, delivery.claimToken!))),
    ]),
  );
  await handOver(db, queue, items.map(({ delivery, delaySeconds }) => ({ id: delivery.id, delaySeconds })));
}

/** Ends a delivery without an attempt (its subscription is gone or inactive, or it was dead-lettered). */
export async function endDelivery(db: Db, deliveryId: string, now = Date.now()): Promise<void> {
  await endStatement(db, deliveryId, now);
}

function endStatement(db: Db, deliveryId: string, now: number) {
  return db
    .update(webhookDeliveries)
    .set({ status: "failed", nextAttemptAt: null, claimedUntil: null, updatedAt: now })
    .where(and(eq(webhookDeliveries.id, deliveryId), eq(webhookDeliveries.status, "pending")));
}

/** The dead-letter queue's consumer: a message that ran out of queue retries marks its delivery failed, on its shard. */
export async function consumeDeadLetters(batch: MessageBatch<DeliveryMessage>, env: Env): Promise<void> {
  for (const message of batch.messages) {
    const { delivery_id: deliveryId, shard } = message.body ?? {};
    const binding = typeof shard === "string" ? shardBinding(env, shard) : undefined;
    if (!binding) {
      // Nothing to mark: without a shard the row stays pending, and that shard's sweeper sends it again.
      console.error(JSON.stringify({ type: "shard_not_configured", shard, delivery_id: deliveryId }));
      if (typeof shard === "string") message.retry({ delaySeconds: ERROR_RETRY_SECONDS });
      else message.ack();
      continue;
    }
    try {
      await endDelivery(createDb(binding), deliveryId);
      console.error(JSON.stringify({ type: "delivery_dead_lettered", shard, delivery_id: deliveryId }));
      message.ack();
    } catch (error) {
      console.error(JSON.stringify({ type: "dead_letter_error", shard, error: String(error) }));
      message.retry({ delaySeconds: ERROR_RETRY_SECONDS });
    }
  }
}
