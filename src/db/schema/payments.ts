import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { tenants } from "./tenants";
import { counterparties } from "./counterparties";

export const PAYMENT_METHODS = ["ach", "check", "card", "wire"] as const;
export const PAYMENT_STATUSES = ["pending", "in-progress", "settled", "canceled", "failed", "refunded"] as const;
export type PaymentMethod = (typeof PAYMENT_METHODS)[number];
export type PaymentStatus = (typeof PAYMENT_STATUSES)[number];

export const payments = sqliteTable(
  "payments",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => tenants.id),
    originatingCounterpartyId: text("originating_counterparty_id")
      .notNull()
      .references(() => counterparties.id),
    receivingCounterpartyId: text("receiving_counterparty_id")
      .notNull()
      .references(() => counterparties.id),
    amountCents: integer("amount_cents").notNull(),
    currency: text("currency").notNull(),
    paymentMethod: text("payment_method", { enum: PAYMENT_METHODS }).notNull(),
    status: text("status", { enum: PAYMENT_STATUSES }).notNull(),
    instrumentNumber: text("instrument_number"),
    refundReason: text("refund_reason"),
    // Number of events so far; the next event's sequence number is version + 1.
    version: integer("version").notNull(),
    // Changes with every write; a write only applies if it still holds the token it read.
    writeToken: text("write_token").notNull(),
    createdAt: integer("created_at").notNull(),
    // Strictly increasing per account, so `updated__gt=<last seen>&ordering=updated` misses nothing.
    updatedAt: integer("updated_at").notNull(),
    // The payment's detail (GET /v2/payments/{id}/) as JSON, written by every payment write in its batch, so a
    // list reads one row per payment. Never null once written (the column allows it; no code relies on that).
    detail: text("detail"),
  },
  (t) => [
    index("payments_created_idx").on(t.accountId, t.createdAt, t.id),
    index("payments_updated_idx").on(t.accountId, t.updatedAt, t.id),
    index("payments_status_idx").on(t.accountId, t.status, t.createdAt, t.id),
    index("payments_originating_idx").on(t.accountId, t.originatingCounterpartyId, t.createdAt, t.id),
    index("payments_receiving_idx").on(t.accountId, t.receivingCounterpartyId, t.createdAt, t.id),
  ],
);
