/**
 * Which deliveries a replay of a window sends (docs/interface.md, "Replay"): the subscription's
 * numbered originals made in the window, of the payments it names if it names any. Not a test
 * delivery (it has no sequence) and not a replayed one (it has the original's, in a column of its
 * own). Stated once here, as TypeScript for the archive's records and as SQL for the log's rows;
 * a table test runs both on the same cases.
 */
import { and, eq, gte, lte, sql, type SQL } from "drizzle-orm";
import { webhookDeliveries } from "../../db/schema";
import { inList } from "../../db/in-list";

/** A delivery as the rule sees it: a log row's columns, or an archived record's fields under the same names. */
export interface Replayable {
  sequence: number | null;
  test: boolean;
  replayId: string | null;
}

/** What a replay asks of its window: one subscription's deliveries made from `since` to `until` (ms, both included), of `paymentIds` (null: all). */
export interface ReplayWindow {
  accountId: string;
  subscriptionId: string;
  since: number;
  until: number;
  paymentIds: string[] | null;
}

/** A delivery with what the window asks of it. */
export interface Windowed extends Replayable {
  subscriptionId: string;
  createdAt: number;
  paymentId: string;
}

/** Whether a replay sends the delivery, whatever its window. Pure. */
export function replayable(delivery: Replayable): boolean {
  return delivery.sequence !== null && !delivery.test && delivery.replayId === null;
}

/** `replayable` as SQL over the log's row. */
export function replayableSql(d: typeof webhookDeliveries = webhookDeliveries): SQL {
  return sql`(${d.sequence} is not null and ${d.test} = 0 and ${d.replayId} is null)`;
}

/** Whether a replay of `window` sends the delivery. Pure. */
export function inWindow(delivery: Windowed, window: ReplayWindow): boolean {
  return (
    replayable(delivery) &&
    delivery.subscriptionId === window.subscriptionId &&
    delivery.createdAt >= window.since &&
    delivery.createdAt <= window.until &&
    (window.paymentIds === null || window.paymentIds.includes(delivery.paymentId))
  );
}

/** `inWindow` as SQL over the log's row. */
export function inWindowSql(window: ReplayWindow, d: typeof webhookDeliveries = webhookDeliveries): SQL {
  return and(
    replayableSql(d),
    eq(d.subscriptionId, window.subscriptionId),
    gte(d.createdAt, window.since),
    lte(d.createdAt, window.until),
    window.paymentIds === null ? undefined : inList(d.paymentId, window.paymentIds),
  )!;
}
