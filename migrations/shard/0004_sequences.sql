ALTER TABLE `webhook_deliveries` ADD `sequence` integer;--> statement-breakpoint
ALTER TABLE `webhook_deliveries` ADD `payment_version` integer;--> statement-breakpoint
ALTER TABLE `webhook_subscriptions` ADD `last_removed_sequence` integer DEFAULT 0 NOT NULL;