CREATE TABLE `webhook_attempts` (
	`delivery_id` text NOT NULL,
	`number` integer NOT NULL,
	`started_at` integer NOT NULL,
	`duration_ms` integer NOT NULL,
	`response_status` integer,
	`error` text,
	`response_excerpt` text,
	PRIMARY KEY(`delivery_id`, `number`),
	FOREIGN KEY (`delivery_id`) REFERENCES `webhook_deliveries`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `webhook_deliveries` (
	`id` text PRIMARY KEY NOT NULL,
	`subscription_id` text NOT NULL,
	`account_id` text NOT NULL,
	`payment_id` text NOT NULL,
	`body` text NOT NULL,
	`status` text NOT NULL,
	`attempts` integer NOT NULL,
	`next_attempt_at` integer,
	`schedule_started_at` integer,
	`enqueued_at` integer,
	`claimed_until` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`subscription_id`) REFERENCES `webhook_subscriptions`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `webhook_deliveries_log_idx` ON `webhook_deliveries` (`subscription_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `webhook_deliveries_status_idx` ON `webhook_deliveries` (`subscription_id`,`status`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `webhook_deliveries_due_idx` ON `webhook_deliveries` (`status`,`next_attempt_at`);--> statement-breakpoint
CREATE TABLE `webhook_subscriptions` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`user` text NOT NULL,
	`event` text NOT NULL,
	`url` text NOT NULL,
	`content_type` text NOT NULL,
	`credentials` text NOT NULL,
	`secret` text NOT NULL,
	`previous_secret` text,
	`previous_secret_expires_at` integer,
	`invoice_ids` integer NOT NULL,
	`payment_status` integer NOT NULL,
	`payment_events` integer NOT NULL,
	`refund_reason` integer NOT NULL,
	`instrument_number` integer NOT NULL,
	`all_payment_details` integer NOT NULL,
	`is_active` integer NOT NULL,
	`failing_since` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `webhook_subscriptions_created_idx` ON `webhook_subscriptions` (`account_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `webhook_subscriptions_active_idx` ON `webhook_subscriptions` (`account_id`,`is_active`);