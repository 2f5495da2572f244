import { sql, type SQL } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { WEBHOOK_CONTENT_TYPES, webhookSubscriptions } from "./webhook-subscriptions";
import { equalsLiteral } from "../literal";

export const DELIVERY_STATUSES = ["pending", "succeeded", "failed", "held"] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** The statuses of a delivery that has not ended: what a later ordered delivery of its payment waits for (webhooks/outbox/order.ts). */
export const NOT_ENDED = ["pending", "held"] as const satisfies readonly DeliveryStatus[];

/** The index of each payment's ordered deliveries not yet ended, in sequence order (webhooks/outbox/order.ts). */
export const ORDER_INDEX = "webhook_deliveries_order_idx";

/**
 * An ordered delivery not yet ended, as SQL over the row `table` names (unqualified columns when
 * none): the order index's condition, written out, since SQLite uses a partial index only for a
 * query that names its condition.
 */
export function orderedNotEnded(table?: string): string {
  const column = (name: string) => (table ? `"${table}"."${name}"` : name);
  return `${column("ordered")} = 1 and (${NOT_ENDED.map((status) => `${column("status")} = '${status}'`).join(" or ")})`;
}

/**
 * The outbox: one row per subscription and payment change, written in the change's own batch. The
 * table is WITHOUT ROWID (added by hand, migrations/README.md), keyed by the subscription's log
 * order: the log is the table itself, and a delivery is found by its id on the id index.
 */
export const webhookDeliveries = sqliteTable(
  "webhook_deliveries",
  {
    id: text("id").notNull(),
    subscriptionId: text("subscription_id")
      .notNull()
      .references(() => webhookSubscriptions.id),
    accountId: text("account_id").notNull(),
    paymentId: text("payment_id").notNull(),
    // The payment event whose change made it (pev_…), when stored; a delivery written by a payment
    // change finds it by payment and `payment_version` (its sequence number). Null for a test delivery.
    eventId: text("event_id"),
    // The exact bytes every attempt sends, when stored: a test delivery's, and those made before
    // `flags` was kept. Otherwise empty, and rebuilt from the payment as it was after `event_id`.
    body: text("body").notNull(),
    // The subscription's expansion flags when the change was made (webhooks/wire/payload.ts flagBits):
    // with the payment's stored detail and the event, they rebuild the body. Null when `body` holds it.
    flags: integer("flags"),
    // The content type the body was encoded in, frozen with it: a later change of the
    // subscription's content_type applies to later changes, never to these bytes.
    contentType: text("content_type", { enum: WEBHOOK_CONTENT_TYPES }).notNull().default("application/json"),
    status: text("status", { enum: DELIVERY_STATUSES }).notNull(),
    attempts: integer("attempts").notNull(),
    // When the next attempt is due; null once the delivery has ended.
    nextAttemptAt: integer("next_attempt_at"),
    // When the retry schedule started (the first attempt, or the last redelivery).
    scheduleStartedAt: integer("schedule_started_at"),
    // The number of the attempt that started it: each retry waits as the schedule's own count of
    // attempts says, so a redelivered or recovered delivery retries after 5 s, 5 min, … again.
    // Null on rows from before it was kept: their schedule started at attempt 1.
    scheduleFirstAttempt: integer("schedule_first_attempt"),
    // When a queue message for the next attempt was last handed over; null if never.
    enqueuedAt: integer("enqueued_at"),
    // A consumer working on it holds it until then, so two copies of a message never both send.
    leasedUntil: integer("leased_until"),
    // Which lease holds it: an attempt's outcome is recorded on the row only under its own lease,
    // so a redelivery asked for mid-attempt is not swallowed by that attempt's success.
    leaseToken: text("lease_token"),
    // The subscription's sequence number (1, 2, 3, … in commit order, without gaps: outbox.ts);
    // null for a test delivery.
    sequence: integer("sequence"),
    // The payment's version the body shows (its events so far); null for a test delivery.
    paymentVersion: integer("payment_version"),
    // A test delivery (POST /v1/webhooks/{id}/test/): sent like any other, marked in the log.
    test: integer("test", { mode: "boolean" }).notNull().default(false),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
    // What it tells (`hook-event`, and the body's `event`): null for `payment.changed`; an
    // operational event's name (webhooks/delivery/health.ts) for a `subscription.health` subscription.
    event: text("event"),
    // Its first attempt, kept on the row (most deliveries take one): the lease that starts it sets
    // `first_started_at` and `first_ended` 0, the record of its outcome the rest, as
    // webhook_attempts keeps each later attempt. Null before the first attempt, and on rows whose
    // first attempt webhook_attempts holds (made before these columns).
    firstStartedAt: integer("first_started_at"),
    firstDurationMs: integer("first_duration_ms"),
    firstResponseStatus: integer("first_response_status"),
    firstError: text("first_error"),
    firstResponseExcerpt: text("first_response_excerpt"),
    firstEnded: integer("first_ended"),
    firstHeaders: text("first_headers"),
    // Made for a per_payment subscription: it waits for its payment's earlier ordered deliveries
    // (webhooks/outbox/order.ts). A redelivery or recovery clears it: that goes out when asked.
    ordered: integer("ordered", { mode: "boolean" }).notNull().default(false),
    // Its first 2xx: the lag a receiver sees is this less `created_at`.
    succeededAt: integer("succeeded_at"),
    // The W3C trace of the write that made it (webhooks/wire/trace.ts): each attempt sends the
    // trace id with a span id of its own, the flags and the trace state.
    traceId: text("trace_id"),
    traceFlags: text("trace_flags"),
    traceState: text("trace_state"),
    // Sent by a replay (webhooks/replays/): its id, and the original delivery's id and sequence,
    // which its attempts send as `webhook-id` and `hook-sequence` (it takes no sequence of its own).
    replayId: text("replay_id"),
    replayOf: text("replay_of"),
    replaySequence: integer("replay_sequence"),
  },
  // D1 writes an entry in each index a new row falls in: a change's delivery writes its row (its
  // log entry), its id and its due entry (or, held, its held entry), and no more.
  (t) => [
    // The subscription's log in created order (its sequence order).
    primaryKey({ columns: [t.subscriptionId, t.createdAt, t.id] }),
    uniqueIndex("webhook_deliveries_id_uq").on(t.id),
    // What the sweeper walks: pending deliveries by when they are due, but for those handed over at
    // their creation and never since (the happy path, which so writes no entry here): the sweeper
    // finds a lost one of those on the logs, past its mark (webhooks/upkeep/fresh.ts).
    index("webhook_deliveries_due_idx")
      .on(t.nextAttemptAt)
      .where(sql`status = 'pending' and (enqueued_at is null or enqueued_at <> created_at)`),
    // A subscription's held and failed deliveries (release, discard, counts, recovery).
    index("webhook_deliveries_held_idx")
      .on(t.subscriptionId, t.status, t.createdAt, t.id)
      .where(sql`status = 'failed' or status = 'held'`),
    // A subscription's attempts in flight (the admission rule counts them): only leased rows.
    index("webhook_deliveries_leased_idx")
      .on(t.subscriptionId, t.leasedUntil)
      .where(sql`leased_until is not null`),
    // A per_payment subscription's deliveries not yet ended, by payment in sequence order: what a
    // delivery waits for, and which one an ending releases. Unordered deliveries write no entry.
    index(ORDER_INDEX).on(t.subscriptionId, t.paymentId, t.sequence).where(sql.raw(orderedNotEnded())),
    // A replay's deliveries (its pace and its cancel): only replayed rows write an entry.
    index("webhook_deliveries_replay_idx")
      .on(t.replayId, t.status)
      .where(sql`replay_id is not null`),
  ],
);

/** A delivery's attempts after its first (which its row keeps), and first attempts made before the row kept them. */
export const webhookAttempts = sqliteTable(
  "webhook_attempts",
  {
    deliveryId: text("delivery_id")
      .notNull()
      .references(() => webhookDeliveries.id),
    number: integer("number").notNull(),
    startedAt: integer("started_at").notNull(),
    durationMs: integer("duration_ms").notNull(),
    responseStatus: integer("response_status"),
    error: text("error"),
    responseExcerpt: text("response_excerpt"),
    // 0 from the lease until the attempt's outcome is recorded: a worker that dies mid-attempt
    // leaves the attempt in the log, marked as never answered, rather than losing it.
    ended: integer("ended").notNull().default(1),
    // The request headers the attempt sent (JSON), its authorization masked; null before it is recorded.
    headers: text("headers"),
  },
  (t) => [primaryKey({ columns: [t.deliveryId, t.number] })],
);

/** `status = '<status>'` over the row `row` names (the table, or an alias's columns), written out for the partial indexes above (db/literal.ts). */
export function deliveryStatusIs(status: DeliveryStatus, row: Pick<typeof webhookDeliveries, "status"> | { status: SQL } = webhookDeliveries) {
  return equalsLiteral(row.status, status);
}

/**
 * A pending delivery handed over since its creation, or never: the due index's condition, written
 * out, since SQLite uses a partial index only for a query that names its condition. The other
 * pending ones are fresh: handed over at their creation (`enqueued_at = created_at`), never since.
 */
export function deliveryDue() {
  const d = webhookDeliveries;
  return sql`${deliveryStatusIs("pending")} and (${d.enqueuedAt} is null or ${d.enqueuedAt} <> ${d.createdAt})`;
}

/** A pending delivery handed over at its creation and never since (the sweeper looks for lost ones on the logs). */
export function deliveryFresh() {
  const d = webhookDeliveries;
  return sql`${deliveryStatusIs("pending")} and ${d.enqueuedAt} = ${d.createdAt}`;
}

/** A delivery row as it is stored. */
export type DeliveryRow = typeof webhookDeliveries.$inferSelect;
