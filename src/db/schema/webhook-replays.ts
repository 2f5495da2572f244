import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { webhookSubscriptions } from "./webhook-subscriptions";

export const REPLAY_STATUSES = ["running", "done", "canceled"] as const;
export type ReplayStatus = (typeof REPLAY_STATUSES)[number];

/**
 * Where a running replay is (webhooks/replays/steps.ts): copying its window from the log, then
 * from the archive, then sending what it copied in sequence order.
 */
export const REPLAY_PHASES = ["log", "archive", "send"] as const;
export type ReplayPhase = (typeof REPLAY_PHASES)[number];

/** A replay of a subscription's deliveries over a window (docs/interface.md, "Replay"). */
export const webhookReplays = sqliteTable(
  "webhook_replays",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id").notNull(),
    subscriptionId: text("subscription_id")
      .notNull()
      .references(() => webhookSubscriptions.id),
    since: integer("since").notNull(),
    until: integer("until").notNull(),
    // The payments it is limited to (a JSON array of ids), or null for all.
    paymentIds: text("payment_ids"),
    status: text("status", { enum: REPLAY_STATUSES }).notNull(),
    // How many deliveries it sends: counted at its start, and made exact once its copy is done.
    count: integer("count").notNull(),
    // How many it has handed to the queue so far.
    sent: integer("sent").notNull().default(0),
    phase: text("phase", { enum: REPLAY_PHASES }).notNull(),
    // The last log row copied (its created_at and id, the log's order); null before the first.
    logCreated: integer("log_created"),
    logId: text("log_id"),
    // The last archive object copied whole; null before the first.
    archiveKey: text("archive_key"),
    // The last original sequence handed to the queue; 0 before the first.
    sentSequence: integer("sent_sequence").notNull().default(0),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  // A subscription's replays, newest first (its list); the running ones (the cron's look for a lost step).
  (t) => [
    index("webhook_replays_subscription_idx").on(t.subscriptionId, t.createdAt),
    index("webhook_replays_running_idx")
      .on(t.updatedAt)
      .where(sql`status = 'running'`),
  ],
);

/**
 * What a replay copied and has yet to send: one row per original delivery, keyed by the original's
 * sequence (so a delivery found in both the log and the archive is kept once), with what rebuilds
 * its body (`flags` and the payment's event, as a log row keeps them) or its bytes (`body`, as the
 * archive keeps them).
 */
export const webhookReplayItems = sqliteTable(
  "webhook_replay_items",
  {
    replayId: text("replay_id")
      .notNull()
      .references(() => webhookReplays.id),
    sequence: integer("sequence").notNull(),
    deliveryId: text("delivery_id").notNull(),
    paymentId: text("payment_id").notNull(),
    eventId: text("event_id"),
    paymentVersion: integer("payment_version"),
    event: text("event"),
    body: text("body").notNull(),
    flags: integer("flags"),
    contentType: text("content_type").notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.replayId, t.sequence] })],
);
