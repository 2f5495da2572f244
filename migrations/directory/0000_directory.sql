CREATE TABLE `accounts` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`created_at` integer NOT NULL,
	`erased_at` integer,
	`shard` text NOT NULL,
	`move_to` text,
	`move_state` text,
	`move_started_at` integer,
	`move_copied_rows` integer,
	`move_progress` text,
	`move_lease_until` integer
);
--> statement-breakpoint
CREATE INDEX `accounts_created_idx` ON `accounts` (`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `accounts_shard_idx` ON `accounts` (`shard`);--> statement-breakpoint
CREATE TABLE `api_users` (
	`username` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`role` text NOT NULL,
	`password_hash` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `api_users_account_idx` ON `api_users` (`account_id`);--> statement-breakpoint
CREATE TABLE `auth_failures` (
	`key` text PRIMARY KEY NOT NULL,
	`window_start` integer NOT NULL,
	`failures` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `auth_failures_window_idx` ON `auth_failures` (`window_start`);--> statement-breakpoint
CREATE TABLE `shards` (
	`name` text PRIMARY KEY NOT NULL,
	`open` integer DEFAULT true NOT NULL,
	`created_at` integer NOT NULL
);
