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
ALTER TABLE `webhook_attempts` ADD `headers` text;--> statement-breakpoint
ALTER TABLE `webhook_deliveries` ADD `test` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `webhook_subscriptions` ADD `last_attempt_at` integer;--> statement-breakpoint
ALTER TABLE `webhook_subscriptions` ADD `last_success_at` integer;