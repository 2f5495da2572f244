/** SQL about a subscription's delivery rows that the admission rule, the stats and retention share. */
import { sql, type SQL } from "drizzle-orm";
import { orderedNotEnded, webhookDeliveries } from "../../db/schema";

/**
 * The subscription id of the row a statement reads or changes, named with its table: drizzle
 * leaves a column unqualified, and inside a subquery over the deliveries (`c`) that would be c's.
 */
export const SUBSCRIPTION_ROW = sql.raw(`"webhook_subscriptions"."id"`);

/** A subscription's attempts in flight at `now`: its deliveries under a lease that has not lapsed. */
export function inFlightOf(subscriptionId: SQL, now: number): SQL<number> {
  return sql<number>`(select count(*) from ${webhookDeliveries} c where c.subscription_id = ${subscriptionId} and c.leased_until > ${now})`.mapWith(Number);
}

/** A subscription's deliveries waiting for an earlier one of their payment (webhooks/outbox/order.ts), counted on the order index. */
export function waitingOf(subscriptionId: SQL): SQL<number> {
  return sql<number>`(select count(*) from ${webhookDeliveries} w where w.subscription_id = ${subscriptionId} and ${sql.raw(orderedNotEnded("w"))} and w.waiting_since is not null)`.mapWith(
    Number,
  );
}
