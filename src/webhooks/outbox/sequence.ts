/**
 * A subscription's sequence (docs/interface.md, "Sequence and version"): one rule for every
 * delivery that carries a number, whatever made it (a payment change, a health event) and
 * whatever became of it later (held, released, discarded, removed by retention).
 *
 * - Numbers go 1, 2, 3, … per subscription in commit order and are never given twice: a new
 *   delivery takes one more than the highest ever given, which is its latest kept delivery's, or
 *   the newest one dropped from the log (`dropped_sequence`) when that is higher.
 * - A subscription's log is its deliveries by `created` (the table's key), and `created` rises
 *   with the number: a payment change's deliveries take the change's stamp, which rises per
 *   account in commit order (services/payments/write-fence.ts); any other numbered delivery takes
 *   `numberedStamp`, above its subscription's latest. So the latest delivery by `created` holds
 *   the highest kept number, and the log's order is the sequence's order (the feed reads it so).
 *
 * Both are SQL read in the statement that inserts the delivery: D1 runs a database's statements
 * one at a time, so no two deliveries of a subscription read the same latest.
 */
import { sql, type SQL } from "drizzle-orm";
import { webhookDeliveries, webhookSubscriptions } from "../../db/schema";

/** The subscription's latest numbered delivery kept in its log (a column of it), on its key from the end. */
function latestKept(subscriptionId: SQL, column: "sequence" | "created_at"): SQL<number | null> {
  const d = webhookDeliveries;
  return sql`(select l.${sql.raw(column)} from ${d} l where l.subscription_id = ${subscriptionId} and l.sequence is not null order by l.created_at desc, l.id desc limit 1)`;
}

/** A column of the subscription's newest dropped delivery. */
function dropped(subscriptionId: SQL, column: "dropped_sequence" | "dropped_created"): SQL<number> {
  return sql`coalesce((select s.${sql.raw(column)} from ${webhookSubscriptions} s where s.id = ${subscriptionId}), 0)`;
}

/** The highest number the subscription has given, as SQL (0 before its first). */
export function highestSequence(subscriptionId: SQL): SQL<number> {
  return sql<number>`max(coalesce(${latestKept(subscriptionId, "sequence")}, 0), ${dropped(subscriptionId, "dropped_sequence")})`;
}

/** The subscription's next sequence number, as SQL. */
export function nextSequence(subscriptionId: SQL): SQL<number> {
  return sql<number>`${highestSequence(subscriptionId)} + 1`;
}

/** The `created` of the newest numbered delivery the subscription has given, as SQL (0 before its first). */
export function highestStamp(subscriptionId: SQL): SQL<number> {
  return sql<number>`max(coalesce(${latestKept(subscriptionId, "created_at")}, 0), ${dropped(subscriptionId, "dropped_created")})`;
}

/**
 * The `created` of a numbered delivery not made by a payment change: now, or just above the
 * subscription's newest when the clock of this Worker is behind it (another isolate's clock, or
 * several made in one millisecond), so that the log's order stays the sequence's.
 */
export function numberedStamp(subscriptionId: SQL, now: number): SQL<number> {
  return sql<number>`max(${now}, ${highestStamp(subscriptionId)} + 1)`;
}

/**
 * The columns of a subscription update that move its dropped mark past the deliveries a batch
 * removes: `removed(column)` is SQL for that column's largest value among them (null for none).
 */
export function droppedPast(removed: (column: "sequence" | "created_at") => SQL) {
  const s = webhookSubscriptions;
  return {
    droppedSequence: sql`max(${s.droppedSequence}, coalesce(${removed("sequence")}, 0))`,
    droppedCreated: sql`max(${s.droppedCreated}, coalesce(${removed("created_at")}, 0))`,
  };
}
