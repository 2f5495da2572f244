import { runNamedBatch, type Db } from "../../db/client";
import type { ShardQueue } from "../outbox/message";
import { handOver } from "../outbox/outbox";
import { queueDelay } from "../wire/retry-schedule";
import { holdPending } from "../subscriptions/holds";
import { statsRows, statsStatements } from "./stats";
import { healthStatements, toldPending } from "./health";
import { endOf, type Attempted } from "./attempted";
import { attemptValues, deliveryStates, laterAttemptOutcomes, replacedFirstAttempts } from "./record-deliveries";
import { backOffHanging, subscriptionState } from "./record-subscriptions";
import { paymentOf, releaseNext } from "../outbox/order";
import { runBodyBytes } from "./lanes";
import { withBodies } from "../outbox/bodies";
import { giveBack, leaseRun, type DeliveryRow } from "./lease";
import { applyLagSteps, lagReads } from "./lag-alert";

export type { Attempted } from "./attempted";

/**
 * How many runs of the next deliveries that ordered ends let go the caller can attempt itself at
 * once (`lanes`, a run each), and the bytes each run's bodies may read at most (`bodyBytes`).
 */
export interface Chain {
  lanes: number;
  bodyBytes: number;
}

export const NO_CHAIN: Chain = { lanes: 0, bodyBytes: 0 };

/**
 * Records a set of attempts in one batch: every attempt's outcome on the row its lease started
 * (gone if the delivery was deleted meanwhile), every delivery's new state (only under the lease
 * that made the attempt: a redelivery asked for meanwhile stands), and each subscription's
 * failure streak as its latest attempt left it. An ordered delivery that ended lets the next of its
 * payment go (outbox/order.ts): after a success, while the caller has `chain` lanes for it, that
 * next one and those after it are leased in the same batch as a run (lease.ts `leaseRun`) and
 * returned for the caller to attempt; otherwise it is released (`releaseNext`) and handed to the
 * queue. One whose run goes on (`handsOn`) lets none go: the next is the run's. What a run did not
 * reach (`givenBack`) is given back first, unattempted, and so is let go like any. Then hands the
 * deliveries to retry to the queue with their delays, and the released ones at once; if that send
 * fails, their rows say so and the sweeper sends them when due.
 */
export async function recordAttempts(db: Db, queue: ShardQueue, attempted: Attempted[], chain: Chain = NO_CHAIN): Promise<DeliveryRow[]> {
  if (attempted.length === 0) return [];
  const recordedAt = Date.now();
  const latest = latestBySubscription(attempted);
  const values = attemptValues(attempted);
  // Ordered deliveries these attempts ended: each lets the next of its payment go, the first
  // successes' next ones to this caller's free lanes, the others' by the queue.
  const ended = attempted.filter(({ delivery, outcome, handsOn }) => delivery.ordered && outcome.status !== "pending" && !handsOn);
  const chained = ended.filter(({ outcome }) => outcome.status === "succeeded").slice(0, chain.lanes);
  const runs = chained.map(({ delivery }) => paymentOf(delivery));
  const givenBack = attempted.flatMap((item) => item.givenBack ?? []);
  const token = crypto.randomUUID();
  const succeededOn = [...new Set(attempted.filter(({ outcome }) => outcome.status === "succeeded").map(({ delivery }) => delivery.subscriptionId))];
  const recorded = await runNamedBatch(db, {
    // A first attempt is logged on its row (deliveryStates): only later ones have a log row to write.
    laterAttempts: attempted.some(({ outcome }) => outcome.number > 1) ? [laterAttemptOutcomes(db, values)] : [],
    deliveries: deliveryStates(db, values),
    // Before any is let go: what runs did not reach, unleased again.
    givenBack: givenBack.length > 0 ? [giveBack(db, givenBack)] : [],
    // After the states: a run of the payment of each first success among the ordered, leased for
    // this caller to attempt, each row with what rebuilds its body.
    chained: chained.length > 0 ? [leaseRun(db, runs, token, recordedAt, runBodyBytes(chain.bodyBytes, 1))] : [],
    // After the chained lease: the next of the payment of every ordered delivery that ended, when
    // it is left to go now and the lease did not take it (not due, leased elsewhere, its body past
    // what is left), is released to the queue (only then: an unordered batch costs no statement more).
    released:
      ended.length > 0
        ? [
            releaseNext(
              db,
              ended.map(({ delivery }) => paymentOf(delivery)),
              recordedAt,
            ),
          ]
        : [],
    subscriptions: [...latest.values()].map((item) => subscriptionState(db, attempted, item, recordedAt)),
    stats: statsStatements(
      db,
      statsRows(
        attempted.map(({ delivery, result, outcome }) => ({
          subscriptionId: delivery.subscriptionId,
          startedAt: result.startedAt,
          durationMs: result.durationMs,
          status: outcome.status,
          // A first 2xx: the lag from the change's commit to the answer (a replay's is no change's).
          lagMs:
            outcome.status === "succeeded" && delivery.succeededAt === null && !delivery.replayId ? Math.max(0, endOf({ result }) - delivery.createdAt) : null,
        })),
      ),
    ),
    replacedFirstAttempts: replacedFirstAttempts(db, values),
    // A subscription deactivated by these attempts holds its other pending deliveries at once.
    holds: [...latest.values()]
      .filter(({ outcome }) => outcome.deactivate)
      .map(({ delivery }) => holdPending(db, delivery.accountId, delivery.subscriptionId, recordedAt)),
    // What health subscriptions are told of it (health.ts), each pair at its own place in the batch.
    health: healthStatements(db, attempted, latest, recordedAt),
    // After the stats: the lag alert's state and lags of the subscriptions seen to succeed
    // (lag-alert.ts); none read when nothing succeeded.
    lags: succeededOn.length > 0 ? [lagReads(db, succeededOn, recordedAt)] : [],
  });
  await backOffHanging(db, recorded.subscriptions, attempted, recordedAt);
  await applyLagSteps(db, queue, recorded.lags.flat(), recordedAt);
  for (const item of attempted) logAttempt(item);
  // Still this attempt's to retry: recorded under its lease (a redelivery asked for meanwhile has
  // its own message) and not held.
  const toRetry = new Set(recorded.deliveries.filter((row) => row.status === "pending").map((row) => row.id));
  const retries = attempted.filter(({ delivery, outcome }) => outcome.retryInSeconds !== null && toRetry.has(delivery.id));
  const told = toldPending(recorded.health);
  await handOver(db, queue, [
    ...retries.map(({ delivery, outcome }) => ({ id: delivery.id, delaySeconds: queueDelay(outcome.retryInSeconds!) })),
    ...told,
    ...recorded.released.flat().map((row) => row.id),
  ]);
  return withBodies(recorded.chained.flat());
}

/** Each subscription's attempt that ended last among `attempted`. */
function latestBySubscription(attempted: Attempted[]): Map<string, Attempted> {
  const latest = new Map<string, Attempted>();
  for (const item of [...attempted].sort((a, b) => endOf(a) - endOf(b))) latest.set(item.delivery.subscriptionId, item);
  return latest;
}

/** One `delivery_attempt` log line. */
function logAttempt({ delivery, result, outcome }: Attempted): void {
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
      trace_id: delivery.traceId ?? undefined,
    }),
  );
}
