import { integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { payments, PAYMENT_STATUSES } from "./payments";

export const paymentEvents = sqliteTable(
  "payment_events",
  {
    id: text("id").primaryKey(),
    paymentId: text("payment_id").notNull().references(() => payments.id),
    // 1 for the creation event, then one more per event: the order of `events`.
    seq: integer("seq").notNull(),
    eventCode: text("event_code").notNull(),
    // The payment's status right after this event.
    status: text("status", { enum: PAYMENT_STATUSES }).notNull(),
    description: text("description").notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [uniqueIndex("payment_events_seq_uq").on(t.paymentId, t.seq)],
);
