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
