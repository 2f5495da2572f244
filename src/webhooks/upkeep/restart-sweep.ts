import { and, isNull, lt, or, type SQL } from "drizzle-orm";
import { webhookDeliveries } from "../../db/schema";

/**
 * The sweeper's restart mode (the local "@restart" cron of `npm start` and the soak): the local
 * queue lives in memory, so every due delivery handed over or claimed before the service started
 * is lost with it; what it handed over or claimed since is its own. On Cloudflare the queue and
 * the claims outlive any isolate, and this never runs. A claim made before `since` ends by `since + claimMs`.
 */
export function lostAtRestart(since: number, claimMs: number): SQL {
  return and(
    or(isNull(webhookDeliveries.enqueuedAt), lt(webhookDeliveries.enqueuedAt, since)),
    or(isNull(webhookDeliveries.claimedUntil), lt(webhookDeliveries.claimedUntil, since + claimMs)),
  )!;
}
