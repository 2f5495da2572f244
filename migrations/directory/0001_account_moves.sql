ALTER TABLE `accounts` ADD `move_to` text;--> statement-breakpoint
ALTER TABLE `accounts` ADD `move_state` text;--> statement-breakpoint
ALTER TABLE `accounts` ADD `move_started_at` integer;--> statement-breakpoint
ALTER TABLE `accounts` ADD `move_copied_rows` integer;--> statement-breakpoint
ALTER TABLE `accounts` ADD `move_progress` text;