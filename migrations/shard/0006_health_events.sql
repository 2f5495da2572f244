ALTER TABLE `webhook_deliveries` ADD `event` text;--> statement-breakpoint
ALTER TABLE `webhook_subscriptions` ADD `consecutive_failures` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `webhook_subscriptions` ADD `failing_reported` integer DEFAULT false NOT NULL;