/** SQL about a subscription's delivery rows that the admission rule, the stats and retention share. */
import { sql, type SQL } from "drizzle-orm";
import { orderedNotEnded, webhookDeliveries } from "../../db/schema";
import { aliased } from "../../db/aliased";
import { blockedSql } from "../outbox/order";

/**
 * The subscription id of the row a statement reads or changes, named with its table: drizzle
 * leaves a column unqualified, and inside a subquery over the deliveries (`c`) that would be c's.
 */
export const SUBSCRIPTION_ROW = sql.raw(`"webhook_subscriptions"."id"`);

/** A subscription's attempts in flight at `now`: its deliveries under a lease that has not lapsed. */
export function inFlightOf(subscriptionId: SQL, now: number): SQL<number> {
  return sql<number>`(select count(*) from ${webhookDeliveries} c where c.subscription_id = ${subscriptionId} and c.leased_until > ${now})`.mapWith(Number);
}

/**
 * A subscription's pending deliveries that wait for an earlier one of their payment
 * (outbox/order.ts), read on the order index: as many rows as it has ordered deliveries not ended.
 */
export function waitingOf(subscriptionId: SQL): SQL<number> {
  const w = aliased(webhookDeliveries, "w");
  return sql<number>`(select count(*) from ${w.from} where ${w.subscriptionId} = ${subscriptionId} and ${sql.raw(orderedNotEnded("w"))} and ${w.status} = 'pending' and ${blockedSql(w)})`.mapWith(
    Number,
  );
}
