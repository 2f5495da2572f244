ALTER TABLE `webhook_deliveries` ADD `event_id` text;--> statement-breakpoint
CREATE INDEX `webhook_deliveries_payment_idx` ON `webhook_deliveries` (`subscription_id`,`payment_id`,`created_at`,`id`);