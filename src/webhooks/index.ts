/**
 * The webhooks module's face: subscriptions, their deliveries and log, the outbox a payment write
 * appends to, the queue consumer and the outbox sweeper. Everything outside src/webhooks/ uses
 * only what is exported here; nothing in src/webhooks/ reaches into src/services/.
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
  type SubscriptionInput,
} from "./subscriptions";
export { getDelivery, listDeliveries, redeliver, type AttemptRow, type Delivery, type DeliveryRow } from "./deliveries";
export { deliveryView, unendedAttempt } from "./delivery-record";
export { applyRetention, archivedDay, retentionDays, type RetentionReport } from "./retention";
export { sendTestDelivery } from "./test-delivery";
export { MAX_RECOVERED, recoverDeliveries } from "./recover";
export { discardHeld } from "./holds";
export { ackFeed, readFeed } from "./feed";
export { matches, parseFilters, type Filters, type FilteredPayment } from "./filters";
export { subscriptionStats, WINDOWS, type StatsWindow } from "./stats";
export { handOver, outboxStatements, subscribersQuery, type OutboxChange, type Subscriber } from "./outbox";
export type { PaymentSnapshot } from "./payload";
export type { DeliveryMessage, ShardQueue } from "./message";
export { consumeDeadLetters, consumeDeliveries } from "./consumer";
export { sweepOutbox } from "./sweeper";
export { resealSubscriptions, type ResealReport } from "./reseal";
