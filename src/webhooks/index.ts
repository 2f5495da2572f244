/**
 * The webhooks module's face: subscriptions, their deliveries and log, the outbox a payment write
 * appends to, the queue consumer and the cron's webhook jobs. Everything outside src/webhooks/
 * uses only what is exported here; nothing in src/webhooks/ reaches into src/services/.
 *
 * Six rooms, each importing only from those listed after it (tools/dev/structure.mjs checks):
 *   delivery/       the queue consumer: the admission rule, lease, attempt, outcome, record, health
 *                   events, the stats writer;
 *   upkeep/         the cron's jobs: the outbox sweep, retention (and its archive), the releases of
 *                   resumed subscriptions;
 *   replays/        replays of a window from the log and the archive: the verbs and their steps;
 *   subscriptions/  the API's verbs: subscriptions (the one place that opens sealed secrets),
 *                   holds, the delivery log and its archive, the feed, stats, recovery;
 *   outbox/         what a payment write appends (rows, filters) and hands to the queue;
 *   wire/           what goes on the wire, pure: bodies, signatures, headers, the retry schedule.
 */
export {
  createSubscription,
  deleteSubscription,
  getSubscription,
  listSubscriptions,
  MAX_SUBSCRIPTIONS,
  TOO_MANY_SUBSCRIPTIONS,
  rotateSubscriptionSecret,
  updateSubscription,
  type Keys,
  type Subscription,
  type SubscriptionFields,
} from "./subscriptions/subscriptions";
export { jwkSet, publicKeys, publishKeys, selectPublisher, unpublishKeys } from "./subscriptions/public-keys";
export { ATTEMPTS_SHOWN, getDelivery, listDeliveries, redeliver, type AttemptRow, type Delivery, type DeliveryRow } from "./subscriptions/deliveries";
export { deliveryView, unendedAttempt } from "./subscriptions/delivery-record";
export { archivedDay } from "./subscriptions/archive";
export { cancelReplay, getReplay, listReplays, startReplay, type ReplayRow } from "./replays/replays";
export { MAX_REPLAY_DAYS, MAX_REPLAY_PAYMENTS } from "./replays/window";
export { resumeStalledReplays } from "./replays/steps";
export { applyRetention, RETENTION_STEP, retentionDays, type RetentionReport } from "./upkeep/retention";
export { sendTestDelivery } from "./subscriptions/test-delivery";
export { MAX_RECOVERED, recoverDeliveries } from "./subscriptions/recover";
export { discardHeld, DISCARDED_AT_ONCE, RELEASED_AT_ONCE } from "./subscriptions/holds";
export { continueReleases } from "./upkeep/releases";
export { ackFeed, readFeed, signedHeaders } from "./subscriptions/feed";
export { matches, parseFilters, type Filters, type FilteredPayment } from "./outbox/filters";
export { subscriptionStats, WINDOWS, type StatsWindow } from "./subscriptions/stats";
export { handOver, outboxOfChange, toSend } from "./outbox/outbox";
export { newTrace, traceOf, type Trace } from "./wire/trace";
export type { PaymentSnapshot } from "./wire/payload";
export type { DeliveryMessage, QueueMessage, ShardQueue } from "./outbox/message";
export { consumeDeadLetters, consumeDeliveries } from "./delivery/consumer";
export { LAG_ALERT_BOUNDS_MS } from "./subscriptions/lag";
export { settleLagging } from "./delivery/lag-alert";
export { sweepOutbox } from "./upkeep/sweeper";
export { resealSubscriptions, type ResealReport } from "./subscriptions/reseal";
export { CHALLENGE_EVENT, CHALLENGE_TIMEOUT_MS, NOT_REQUIRED, verifyNow } from "./subscriptions/verification";
export { CHALLENGE_QUERIES, CHALLENGES_AT_ONCE, continueChallenges, sendChallenge } from "./delivery/challenge";
