import { integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { payments, PAYMENT_STATUSES } from "./payments";

/**
 * A payment's events, keyed by the payment and their order. The table is WITHOUT ROWID (migration
 * 0012; drizzle cannot say so): an event is one row and no index entry, and an event is found by
 * its payment and sequence number, or by its id among its payment's events.
 */
export const paymentEvents = sqliteTable(
  "payment_events",
  {
    id: text("id").notNull(),
    paymentId: text("payment_id")
      .notNull()
      .references(() => payments.id),
    // 1 for the creation event, then one more per event: the order of `events`.
    seq: integer("seq").notNull(),
    eventCode: text("event_code").notNull(),
    // The payment's status right after this event.
    status: text("status", { enum: PAYMENT_STATUSES }).notNull(),
    description: text("description").notNull(),
    // The payment's instrument number and refund reason right after this event, as `status` is:
    // with them and the stored detail, a webhook body is rebuilt as it was after any event.
    instrumentNumber: text("instrument_number"),
    refundReason: text("refund_reason"),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.paymentId, t.seq] })],
);
