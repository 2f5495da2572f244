import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { tenants } from "./tenants";

export const WEBHOOK_CONTENT_TYPES = ["application/json", "application/x-www-form-urlencoded"] as const;
export type WebhookContentType = (typeof WEBHOOK_CONTENT_TYPES)[number];
export const SIGNING_SCHEMES = ["hmac", "ed25519"] as const;
export type SigningScheme = (typeof SIGNING_SCHEMES)[number];
/** Whether a payment's deliveries wait for its earlier ones (webhooks/outbox/order.ts). */
export const ORDERINGS = ["none", "per_payment"] as const;
export type Ordering = (typeof ORDERINGS)[number];
/** Where the proof that its receiver wants its deliveries stands (docs/interface.md, "Endpoint ownership"). */
export const VERIFICATIONS = ["not_required", "pending", "verified", "failed"] as const;
export type Verification = (typeof VERIFICATIONS)[number];

/**
 * Whether a subscription's deliveries go out: it is active (not paused, nor deactivated by the
 * service), and its receiver's ownership is proven or not required. Otherwise what it is due is
 * held (webhooks/subscriptions/holds.ts). The rule once; `sendsSql` is its SQL.
 */
export function sends(row: { isActive: boolean; verification: Verification }): boolean {
  return row.isActive && (row.verification === "not_required" || row.verification === "verified");
}

/** `sends` as SQL, over the subscription row `alias` names (1 or 0). */
export function sendsSql(alias: string): string {
  return `(${alias}.is_active = 1 and ${alias}.verification in ('not_required', 'verified'))`;
}

/** The lag past which a subscription is lagging, unless it says otherwise. */
export const DEFAULT_LAG_ALERT_MS = 60_000;

export const webhookSubscriptions = sqliteTable(
  "webhook_subscriptions",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => tenants.id),
    // The API username that made it (kept as text: the user may be deleted later).
    user: text("user").notNull(),
    event: text("event").notNull(),
    // A name for people (the console shows it); null when none was given.
    description: text("description"),
    url: text("url").notNull(),
    contentType: text("content_type", { enum: WEBHOOK_CONTENT_TYPES }).notNull(),
    // AES-GCM ciphertexts (lib/encryption): the subscriber's Basic credentials and signing secrets.
    credentials: text("credentials").notNull(),
    secret: text("secret").notNull(),
    previousSecret: text("previous_secret"),
    previousSecretExpiresAt: integer("previous_secret_expires_at"),
    // How `webhook-signature` is made: `v1` (HMAC with the secret) or `v1a` (Ed25519 with its key
    // pair). With ed25519, `signing_key` (sealed, whsk_…) signs and `public_key` (whpk_…) verifies;
    // the previous pair signs too until previous_secret_expires_at, like the previous secret.
    signing: text("signing", { enum: SIGNING_SCHEMES }).notNull().default("hmac"),
    signingKey: text("signing_key"),
    previousSigningKey: text("previous_signing_key"),
    publicKey: text("public_key"),
    previousPublicKey: text("previous_public_key"),
    invoiceIds: integer("invoice_ids", { mode: "boolean" }).notNull(),
    paymentStatus: integer("payment_status", { mode: "boolean" }).notNull(),
    paymentEvents: integer("payment_events", { mode: "boolean" }).notNull(),
    refundReason: integer("refund_reason", { mode: "boolean" }).notNull(),
    instrumentNumber: integer("instrument_number", { mode: "boolean" }).notNull(),
    allPaymentDetails: integer("all_payment_details", { mode: "boolean" }).notNull(),
    isActive: integer("is_active", { mode: "boolean" }).notNull(),
    // Which changes make a delivery (webhooks/outbox/filters.ts), as JSON; null: every change.
    filters: text("filters"),
    // Start of the current run of failed attempts with no success; null while healthy.
    failingSince: integer("failing_since"),
    // Its failed attempts since its last success, and whether health subscriptions were told it
    // is failing (webhooks/delivery/health.ts: told once, and told again when it recovers).
    consecutiveFailures: integer("consecutive_failures").notNull().default(0),
    failingReported: integer("failing_reported", { mode: "boolean" }).notNull().default(false),
    // The subscription's latest attempt and latest successful one, kept as attempts are recorded.
    lastAttemptAt: integer("last_attempt_at"),
    lastSuccessAt: integer("last_success_at"),
    // The admission rule's state (webhooks/delivery/admission.ts), shared by every consumer: nothing of the
    // subscription is leased before backoff_until; its attempts' timeouts and answers since recent_since.
    backoffUntil: integer("backoff_until"),
    // The highest sequence number among its deliveries retention removed: a feed cursor before it
    // would have to list a delivery that is gone (410).
    lastRemovedSequence: integer("last_removed_sequence").notNull().default(0),
    // The newest delivery dropped from its log (by retention or a discard): its sequence number
    // and `created`. Numbers and stamps go on above it (webhooks/outbox/sequence.ts), so none is
    // given twice, even when every delivery it had is gone.
    droppedSequence: integer("dropped_sequence").notNull().default(0),
    droppedCreated: integer("dropped_created").notNull().default(0),
    // The feed's position kept for it (POST …/feed/ack/): the cursor, and its sequence number.
    feedAcked: text("feed_acked"),
    feedAckedSequence: integer("feed_acked_sequence"),
    recentTimeouts: integer("recent_timeouts").notNull().default(0),
    recentAnswers: integer("recent_answers").notNull().default(0),
    recentSince: integer("recent_since"),
    // Its deliveries of one payment go out one at a time, in sequence order (per_payment), or not.
    ordering: text("ordering", { enum: ORDERINGS }).notNull().default("none"),
    // The p95 lag (ms) past which health subscriptions are told it is lagging; null: never.
    lagAlertMs: integer("lag_alert_ms").default(DEFAULT_LAG_ALERT_MS),
    // The lag alert's state, for its health events: since when it has lagged (subscription.lagging),
    // and since when it has been under its alert again (subscription.caught_up after 5 minutes).
    laggingSince: integer("lagging_since"),
    caughtUpSince: integer("caught_up_since"),
    // Its receiver's proof of ownership: where it stands; when the current run of challenges
    // started (it fails 3 days after), how many were sent, and when the next is due.
    verification: text("verification", { enum: VERIFICATIONS }).notNull().default("not_required"),
    verificationStartedAt: integer("verification_started_at"),
    verificationAttempts: integer("verification_attempts").notNull().default(0),
    verificationNextAt: integer("verification_next_at"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [
    index("webhook_subscriptions_created_idx").on(t.accountId, t.createdAt, t.id),
    index("webhook_subscriptions_active_idx").on(t.accountId, t.isActive),
    // The subscriptions that lag now: the cron looks at them even when nothing is delivered.
    index("webhook_subscriptions_lagging_idx")
      .on(t.laggingSince)
      .where(sql`lagging_since is not null`),
    // The challenges due: the cron sends them.
    index("webhook_subscriptions_verification_idx")
      .on(t.verificationNextAt)
      .where(sql`verification = 'pending'`),
  ],
);

/** A subscription row as it is stored. */
export type SubscriptionRow = typeof webhookSubscriptions.$inferSelect;
