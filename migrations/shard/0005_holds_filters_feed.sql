ALTER TABLE `tenants` ADD `epoch` text;--> statement-breakpoint
ALTER TABLE `webhook_subscriptions` ADD `filters` text;--> statement-breakpoint
ALTER TABLE `webhook_subscriptions` ADD `feed_acked` text;--> statement-breakpoint
ALTER TABLE `webhook_subscriptions` ADD `feed_acked_sequence` integer;