CREATE TABLE `webhook_replay_items` (
	`replay_id` text NOT NULL,
	`sequence` integer NOT NULL,
	`delivery_id` text NOT NULL,
	`payment_id` text NOT NULL,
	`event_id` text,
	`payment_version` integer,
	`event` text,
	`body` text NOT NULL,
	`flags` integer,
	`content_type` text NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`replay_id`, `sequence`),
	FOREIGN KEY (`replay_id`) REFERENCES `webhook_replays`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `webhook_replays` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`subscription_id` text NOT NULL,
	`since` integer NOT NULL,
	`until` integer NOT NULL,
	`payment_ids` text,
	`status` text NOT NULL,
	`count` integer NOT NULL,
	`sent` integer DEFAULT 0 NOT NULL,
	`phase` text NOT NULL,
	`log_created` integer,
	`log_id` text,
	`archive_key` text,
	`sent_sequence` integer DEFAULT 0 NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`subscription_id`) REFERENCES `webhook_subscriptions`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `webhook_replays_subscription_idx` ON `webhook_replays` (`subscription_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `webhook_replays_running_idx` ON `webhook_replays` (`updated_at`) WHERE status = 'running';--> statement-breakpoint
ALTER TABLE `webhook_deliveries` ADD `replay_id` text;--> statement-breakpoint
ALTER TABLE `webhook_deliveries` ADD `replay_of` text;--> statement-breakpoint
ALTER TABLE `webhook_deliveries` ADD `replay_sequence` integer;--> statement-breakpoint
CREATE INDEX `webhook_deliveries_replay_idx` ON `webhook_deliveries` (`replay_id`,`status`) WHERE replay_id is not null;