ALTER TABLE `webhook_subscriptions` ADD `dropped_sequence` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `webhook_subscriptions` ADD `dropped_created` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
-- Hand-written: until now `last_removed_sequence` also kept what discards dropped, so numbering goes on above it.
UPDATE `webhook_subscriptions` SET `dropped_sequence` = `last_removed_sequence`;
