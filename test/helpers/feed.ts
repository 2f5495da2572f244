import { createDb } from "../../src/db/client";
import { applyRetention } from "../../src/webhooks";
import { wholeList, call, shardD1, type User } from "./api";

/** A feed item, as GET …/feed/ lists it. */
export type Item = { sequence: number; delivery_id: string; payment_id: string; status: string; created: string; body: string };

/** A row of the delivery log, as GET …/deliveries/ lists it. */
export type LogRow = { id: string; sequence: number | null; status: string; created: string; event: string | null };

/** The subscription's numbered deliveries in the log, oldest first (the log lists newest first). */
export async function logOf(user: User, subscriptionId: string): Promise<LogRow[]> {
  const res = await wholeList(`/v1/webhooks/${subscriptionId}/deliveries/`, user.headers);
  if (res.status !== 200) throw new Error(`log: ${res.status} ${JSON.stringify(res.json)}`);
  return (res.json.results as LogRow[]).filter((row) => row.sequence !== null).reverse();
}

/** Reads the whole feed from its start, `limit` at a time, following each page's `next` until a page is empty. */
export async function feedFromStart(user: User, subscriptionId: string, limit: number): Promise<Item[]> {
  const items: Item[] = [];
  let after = "";
  for (let page = 0; page < 10_000; page++) {
    const res = await call("GET", `/v1/webhooks/${subscriptionId}/feed/?limit=${limit}${after}`, { headers: user.headers });
    if (res.status !== 200) throw new Error(`feed after ${items.length} items: ${res.status} ${JSON.stringify(res.json)}`);
    if (res.json.results.length === 0) return items;
    items.push(...res.json.results);
    after = `&after=${res.json.next}`;
  }
  throw new Error("the feed never ended");
}

const DAY = 86_400_000;

/**
 * Makes the subscription's deliveries numbered up to `upTo` (each ended or held) look 40 days
 * old, their order kept, so that retention (30 days) takes them. It moves their `created`: read
 * cursors after it.
 */
export async function ageForRetention(user: User, subscriptionId: string, upTo: number): Promise<void> {
  const shard = await shardD1(user.accountId);
  await shard
    .prepare("update webhook_deliveries set created_at = created_at - ?1, updated_at = created_at - ?1 where subscription_id = ?2 and sequence <= ?3")
    .bind(40 * DAY, subscriptionId, upTo)
    .run();
}

/** Cron runs of retention until none of the subscription's deliveries numbered up to `upTo` is left (aged by ageForRetention). */
export async function runRetention(user: User, subscriptionId: string, upTo: number): Promise<void> {
  const shard = await shardD1(user.accountId);
  for (let run = 0; run < 100; run++) {
    await applyRetention(createDb(shard), undefined, 30, Date.now());
    const left = await shard
      .prepare("select count(*) as n from webhook_deliveries where subscription_id = ? and sequence <= ?")
      .bind(subscriptionId, upTo)
      .first<{ n: number }>();
    if (left!.n === 0) return;
  }
  throw new Error("retention left deliveries it should have removed (are they all ended or held, and aged?)");
}
