import { and, isNull, lt, or, type SQL } from "drizzle-orm";
import { webhookDeliveries } from "../../db/schema";

/**
 * The sweeper's restart mode (the local "@restart" cron of `npm start` and the soak): the local
 * queue lives in memory, so every due delivery handed over or leased before the service started
 * is lost with it; what it handed over or leased since is its own. On Cloudflare the queue and
 * the leases outlive any isolate, and this never runs. A lease made before `since` ends by `since + leaseMs`.
 */
export function lostAtRestart(since: number, leaseMs: number): SQL {
  return and(
    or(isNull(webhookDeliveries.enqueuedAt), lt(webhookDeliveries.enqueuedAt, since)),
    or(isNull(webhookDeliveries.leasedUntil), lt(webhookDeliveries.leasedUntil, since + leaseMs)),
  )!;
}
