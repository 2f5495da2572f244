CREATE TABLE `tenants` (
	`id` text PRIMARY KEY NOT NULL,
	`created_at` integer NOT NULL,
	`epoch` text
);
--> statement-breakpoint
CREATE TABLE `counterparties` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`internal_id` text NOT NULL,
	`type` text NOT NULL,
	`name` text NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `counterparties_internal_id_uq` ON `counterparties` (`account_id`,`type`,`internal_id`);--> statement-breakpoint
CREATE INDEX `counterparties_internal_id_list_idx` ON `counterparties` (`account_id`,`internal_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `counterparties_type_idx` ON `counterparties` (`account_id`,`type`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `counterparties_created_idx` ON `counterparties` (`account_id`,`created_at`,`id`);--> statement-breakpoint
CREATE TABLE `invoices` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`invoice_number` text NOT NULL,
	`buyer_id` text NOT NULL,
	`supplier_id` text NOT NULL,
	`amount_cents` integer NOT NULL,
	`currency` text NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`buyer_id`) REFERENCES `counterparties`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`supplier_id`) REFERENCES `counterparties`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `invoices_created_idx` ON `invoices` (`account_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `invoices_number_idx` ON `invoices` (`account_id`,`invoice_number`,`created_at`,`id`);--> statement-breakpoint
CREATE TABLE `list_counts` (
	`account_id` text NOT NULL,
	`resource` text NOT NULL,
	`n` integer NOT NULL,
	`pending` integer DEFAULT 0 NOT NULL,
	`in_progress` integer DEFAULT 0 NOT NULL,
	`settled` integer DEFAULT 0 NOT NULL,
	`canceled` integer DEFAULT 0 NOT NULL,
	`failed` integer DEFAULT 0 NOT NULL,
	`refunded` integer DEFAULT 0 NOT NULL,
	`counted_to` integer,
	PRIMARY KEY(`account_id`, `resource`)
) WITHOUT ROWID;
--> statement-breakpoint
CREATE TABLE `payment_events` (
	`id` text NOT NULL,
	`payment_id` text NOT NULL,
	`seq` integer NOT NULL,
	`event_code` text NOT NULL,
	`status` text NOT NULL,
	`description` text NOT NULL,
	`instrument_number` text,
	`refund_reason` text,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`payment_id`, `seq`),
	FOREIGN KEY (`payment_id`) REFERENCES `payments`(`id`) ON UPDATE no action ON DELETE no action
) WITHOUT ROWID;
--> statement-breakpoint
CREATE TABLE `payment_invoices` (
	`invoice_id` text NOT NULL,
	`claim` text NOT NULL,
	`payment_id` text NOT NULL,
	`invoice_number` text DEFAULT '' NOT NULL,
	`amount_cents` integer DEFAULT 0 NOT NULL,
	`invoice_created_at` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`invoice_id`, `claim`),
	FOREIGN KEY (`invoice_id`) REFERENCES `invoices`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`payment_id`) REFERENCES `payments`(`id`) ON UPDATE no action ON DELETE no action
) WITHOUT ROWID;
--> statement-breakpoint
CREATE TABLE `payments` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`originating_counterparty_id` text NOT NULL,
	`receiving_counterparty_id` text NOT NULL,
	`amount_cents` integer NOT NULL,
	`currency` text NOT NULL,
	`payment_method` text NOT NULL,
	`status` text NOT NULL,
	`instrument_number` text,
	`refund_reason` text,
	`version` integer NOT NULL,
	`write_token` text NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`detail` text,
	FOREIGN KEY (`account_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`originating_counterparty_id`) REFERENCES `counterparties`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`receiving_counterparty_id`) REFERENCES `counterparties`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `payments_created_idx` ON `payments` (`account_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `payments_updated_idx` ON `payments` (`account_id`,`updated_at`,`id`);--> statement-breakpoint
CREATE INDEX `payments_status_idx` ON `payments` (`account_id`,`status`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `payments_originating_idx` ON `payments` (`account_id`,`originating_counterparty_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `payments_receiving_idx` ON `payments` (`account_id`,`receiving_counterparty_id`,`created_at`,`id`);--> statement-breakpoint
CREATE TABLE `webhook_attempts` (
	`delivery_id` text NOT NULL,
	`number` integer NOT NULL,
	`started_at` integer NOT NULL,
	`duration_ms` integer NOT NULL,
	`response_status` integer,
	`error` text,
	`response_excerpt` text,
	`ended` integer DEFAULT 1 NOT NULL,
	`headers` text,
	PRIMARY KEY(`delivery_id`, `number`),
	FOREIGN KEY (`delivery_id`) REFERENCES `webhook_deliveries`(`id`) ON UPDATE no action ON DELETE no action
) WITHOUT ROWID;
--> statement-breakpoint
CREATE TABLE `webhook_deliveries` (
	`id` text NOT NULL,
	`subscription_id` text NOT NULL,
	`account_id` text NOT NULL,
	`payment_id` text NOT NULL,
	`event_id` text,
	`body` text NOT NULL,
	`flags` integer,
	`content_type` text DEFAULT 'application/json' NOT NULL,
	`status` text NOT NULL,
	`attempts` integer NOT NULL,
	`next_attempt_at` integer,
	`schedule_started_at` integer,
	`schedule_first_attempt` integer,
	`enqueued_at` integer,
	`claimed_until` integer,
	`claim_token` text,
	`sequence` integer,
	`payment_version` integer,
	`test` integer DEFAULT false NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`event` text,
	`first_started_at` integer,
	`first_duration_ms` integer,
	`first_response_status` integer,
	`first_error` text,
	`first_response_excerpt` text,
	`first_ended` integer,
	`first_headers` text,
	PRIMARY KEY(`subscription_id`, `created_at`, `id`),
	FOREIGN KEY (`subscription_id`) REFERENCES `webhook_subscriptions`(`id`) ON UPDATE no action ON DELETE no action
) WITHOUT ROWID;
--> statement-breakpoint
CREATE UNIQUE INDEX `webhook_deliveries_id_uq` ON `webhook_deliveries` (`id`);--> statement-breakpoint
CREATE INDEX `webhook_deliveries_due_idx` ON `webhook_deliveries` (`next_attempt_at`) WHERE status = 'pending' and (enqueued_at is null or enqueued_at <> created_at);--> statement-breakpoint
CREATE INDEX `webhook_deliveries_held_idx` ON `webhook_deliveries` (`subscription_id`,`status`,`created_at`,`id`) WHERE status = 'failed' or status = 'held';--> statement-breakpoint
CREATE INDEX `webhook_deliveries_claimed_idx` ON `webhook_deliveries` (`subscription_id`,`claimed_until`) WHERE claimed_until is not null;--> statement-breakpoint
CREATE TABLE `webhook_subscriptions` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`user` text NOT NULL,
	`event` text NOT NULL,
	`description` text,
	`url` text NOT NULL,
	`content_type` text NOT NULL,
	`credentials` text NOT NULL,
	`secret` text NOT NULL,
	`previous_secret` text,
	`previous_secret_expires_at` integer,
	`signing` text DEFAULT 'hmac' NOT NULL,
	`signing_key` text,
	`previous_signing_key` text,
	`public_key` text,
	`previous_public_key` text,
	`invoice_ids` integer NOT NULL,
	`payment_status` integer NOT NULL,
	`payment_events` integer NOT NULL,
	`refund_reason` integer NOT NULL,
	`instrument_number` integer NOT NULL,
	`all_payment_details` integer NOT NULL,
	`is_active` integer NOT NULL,
	`filters` text,
	`failing_since` integer,
	`consecutive_failures` integer DEFAULT 0 NOT NULL,
	`failing_reported` integer DEFAULT false NOT NULL,
	`last_attempt_at` integer,
	`last_success_at` integer,
	`held_until` integer,
	`last_removed_sequence` integer DEFAULT 0 NOT NULL,
	`dropped_sequence` integer DEFAULT 0 NOT NULL,
	`dropped_created` integer DEFAULT 0 NOT NULL,
	`feed_acked` text,
	`feed_acked_sequence` integer,
	`recent_timeouts` integer DEFAULT 0 NOT NULL,
	`recent_answers` integer DEFAULT 0 NOT NULL,
	`recent_since` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `webhook_subscriptions_created_idx` ON `webhook_subscriptions` (`account_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `webhook_subscriptions_active_idx` ON `webhook_subscriptions` (`account_id`,`is_active`);--> statement-breakpoint
CREATE TABLE `time_counts` (
	`account_id` text NOT NULL,
	`key` text NOT NULL,
	`size` integer NOT NULL,
	`bucket` integer NOT NULL,
	`n` integer NOT NULL,
	`pending` integer DEFAULT 0 NOT NULL,
	`in_progress` integer DEFAULT 0 NOT NULL,
	`settled` integer DEFAULT 0 NOT NULL,
	`canceled` integer DEFAULT 0 NOT NULL,
	`failed` integer DEFAULT 0 NOT NULL,
	`refunded` integer DEFAULT 0 NOT NULL,
	`counted_to` integer,
	PRIMARY KEY(`account_id`, `key`, `size`, `bucket`)
) WITHOUT ROWID;
--> statement-breakpoint
CREATE TABLE `idempotency_keys` (
	`account_id` text NOT NULL,
	`username` text NOT NULL,
	`key` text NOT NULL,
	`request_hash` text NOT NULL,
	`token` text NOT NULL,
	`locked_until` integer NOT NULL,
	`status` integer,
	`body` text,
	`sealed` integer DEFAULT 0 NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`account_id`, `username`, `key`)
);
--> statement-breakpoint
CREATE INDEX `idempotency_keys_created` ON `idempotency_keys` (`created_at`);--> statement-breakpoint
CREATE TABLE `webhook_stats` (
	`subscription_id` text NOT NULL,
	`bucket_start` integer NOT NULL,
	`attempts` integer NOT NULL,
	`succeeded` integer NOT NULL,
	`failed` integer NOT NULL,
	`pending` integer NOT NULL,
	`h0` integer DEFAULT 0 NOT NULL,
	`h1` integer DEFAULT 0 NOT NULL,
	`h2` integer DEFAULT 0 NOT NULL,
	`h3` integer DEFAULT 0 NOT NULL,
	`h4` integer DEFAULT 0 NOT NULL,
	`h5` integer DEFAULT 0 NOT NULL,
	`h6` integer DEFAULT 0 NOT NULL,
	`h7` integer DEFAULT 0 NOT NULL,
	`h8` integer DEFAULT 0 NOT NULL,
	`h9` integer DEFAULT 0 NOT NULL,
	`h10` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`subscription_id`, `bucket_start`)
);
--> statement-breakpoint
CREATE TABLE `move_log` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`account_id` text NOT NULL,
	`tbl` text NOT NULL,
	`key` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `move_log_account_idx` ON `move_log` (`account_id`,`seq`);--> statement-breakpoint
CREATE TABLE `moves` (
	`account_id` text PRIMARY KEY NOT NULL,
	`state` text NOT NULL,
	`started_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `sweep_marks` (
	`name` text PRIMARY KEY NOT NULL,
	`at` integer NOT NULL
);
