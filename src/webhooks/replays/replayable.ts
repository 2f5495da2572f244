/**
 * Which deliveries a replay sends (docs/interface.md, "Replay"): the subscription's numbered
 * originals. Not a test delivery (it has no sequence) and not a replayed one (it has the
 * original's, in a column of its own). Stated once here, as TypeScript for the archive's records
 * and as SQL for the log's rows; a table test runs both.
 */
import { sql, type SQL } from "drizzle-orm";
import { webhookDeliveries } from "../../db/schema";

/** A delivery as the rule sees it: a log row's columns, or an archived record's fields under the same names. */
export interface Replayable {
  sequence: number | null;
  test: boolean;
  replayId: string | null;
}

/** Whether a replay sends the delivery. Pure. */
export function replayable(delivery: Replayable): boolean {
  return delivery.sequence !== null && !delivery.test && delivery.replayId === null;
}

/** `replayable` as SQL over the log's row. */
export function replayableSql(d: typeof webhookDeliveries = webhookDeliveries): SQL {
  return sql`(${d.sequence} is not null and ${d.test} = 0 and ${d.replayId} is null)`;
}
