/**
 * The statements that record attempts on their deliveries' rows, for recordAttempts' batch: every
 * attempt's values as one JSON parameter (`attemptValues`), read by each statement as a table.
 */
import { and, eq, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { sendsSql, webhookAttempts, webhookDeliveries, webhookSubscriptions } from "../../db/schema";
import { jsonColumn, jsonRows } from "../../db/json-rows";
import { storedHeaders } from "../wire/sent-headers";
import type { Attempted } from "./attempted";

/**
 * One row of values per attempt, as JSON that the statements read in SQL through json_each
 * (jsonRows): one statement for all the attempts, where a statement each would be many.
 */
export function attemptValues(attempted: Attempted[]): string {
  return JSON.stringify(
    attempted.map(({ delivery, result, outcome }) => {
      const end = result.startedAt + result.durationMs;
      return {
        id: delivery.id,
        leaseToken: delivery.leaseToken,
        number: outcome.number,
        startedAt: result.startedAt,
        durationMs: result.durationMs,
        responseStatus: result.responseStatus,
        error: result.error,
        excerpt: result.excerpt,
        headers: storedHeaders(result.headers),
        status: outcome.status,
        scheduleStartedAt: outcome.scheduleStartedAt,
        scheduleFirstAttempt: outcome.scheduleFirstAttempt,
        nextAttemptAt: outcome.retryInSeconds === null ? null : Math.round(end + outcome.retryInSeconds * 1000),
        enqueuedAt: outcome.retryInSeconds === null ? delivery.enqueuedAt : end,
        updatedAt: end,
      };
    }),
  );
}

/** Each first-attempt column of a delivery row and the attempt's value it records (null: `first_ended`, set to 1). */
const FIRST_ATTEMPT_VALUES = {
  firstStartedAt: "startedAt",
  firstDurationMs: "durationMs",
  firstResponseStatus: "responseStatus",
  firstError: "error",
  firstResponseExcerpt: "excerpt",
  firstHeaders: "headers",
  firstEnded: null,
} as const;

/** A column of the attempts' values (`attemptValues`, read as the table `v`). */
const v = jsonColumn;

/** A first attempt's outcome goes on its delivery's row, when the lease started it there. */
const firstOnRow = sql`(${v("number")} = 1 and ${webhookDeliveries.firstStartedAt} is not null)`;

/** Each first-attempt column takes the attempt's value when `firstOnRow`, or keeps its own. */
function firstOutcome() {
  return Object.fromEntries(
    Object.entries(FIRST_ATTEMPT_VALUES).map(([column, value]) => [
      column,
      sql`case when ${firstOnRow} then ${value === null ? sql`1` : v(value)} else ${webhookDeliveries[column as keyof typeof FIRST_ATTEMPT_VALUES]} end`,
    ]),
  );
}

/** The values a first attempt's outcome reads. */
const FIRST_ATTEMPT_COLUMNS = ["number", ...Object.values(FIRST_ATTEMPT_VALUES).filter((value) => value !== null)];

/** Each later attempt's outcome, on the row the lease wrote when it started. */
export function laterAttemptOutcomes(db: Db, values: string) {
  return db
    .update(webhookAttempts)
    .set({
      startedAt: v("startedAt"),
      durationMs: v("durationMs"),
      responseStatus: v("responseStatus"),
      error: v("error"),
      responseExcerpt: v("excerpt"),
      headers: v("headers"),
      ended: 1,
    })
    .from(jsonRows(values, "id", "number", "startedAt", "durationMs", "responseStatus", "error", "excerpt", "headers"))
    .where(and(eq(webhookAttempts.deliveryId, v("id")), eq(webhookAttempts.number, v("number"))));
}

/**
 * Each delivery's new state, under the lease that made its attempt, with its first attempt's
 * outcome; answers the rows it changed. A retry of a subscription paused or deactivated meanwhile
 * is held instead (holds.ts).
 */
export function deliveryStates(db: Db, values: string) {
  const pausedRetry = sql`(${v("status")} = 'pending' and coalesce((select ${sql.raw(sendsSql("s"))} from ${webhookSubscriptions} s where s.id = "webhook_deliveries"."subscription_id"), 0) = 0)`;
  return db
    .update(webhookDeliveries)
    .set({
      status: sql`case when ${pausedRetry} then 'held' else ${v("status")} end`,
      scheduleStartedAt: v("scheduleStartedAt"),
      scheduleFirstAttempt: v("scheduleFirstAttempt"),
      nextAttemptAt: sql`case when ${pausedRetry} then null else ${v("nextAttemptAt")} end`,
      enqueuedAt: sql`case when ${pausedRetry} then null else ${v("enqueuedAt")} end`,
      leasedUntil: null,
      leaseToken: null,
      // Its first 2xx: a redelivery's later success keeps it.
      succeededAt: sql`case when ${v("status")} = 'succeeded' then coalesce(${webhookDeliveries.succeededAt}, ${v("updatedAt")}) else ${webhookDeliveries.succeededAt} end`,
      updatedAt: v("updatedAt"),
      ...firstOutcome(),
    })
    .from(
      jsonRows(
        values,
        "id",
        "leaseToken",
        "status",
        "scheduleStartedAt",
        "scheduleFirstAttempt",
        "nextAttemptAt",
        "enqueuedAt",
        "updatedAt",
        ...FIRST_ATTEMPT_COLUMNS,
      ),
    )
    .where(and(eq(webhookDeliveries.id, v("id")), eq(webhookDeliveries.leaseToken, v("leaseToken"))))
    .returning({ id: webhookDeliveries.id, status: webhookDeliveries.status });
}

/** A first attempt whose lease a redelivery replaced meanwhile: its outcome is still logged. */
export function replacedFirstAttempts(db: Db, values: string) {
  return db
    .update(webhookDeliveries)
    .set(firstOutcome())
    .from(jsonRows(values, "id", ...FIRST_ATTEMPT_COLUMNS))
    .where(and(eq(webhookDeliveries.id, v("id")), firstOnRow, sql`${webhookDeliveries.firstEnded} = 0`));
}
