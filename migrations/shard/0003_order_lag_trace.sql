ALTER TABLE `webhook_deliveries` ADD `ordered` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `webhook_deliveries` ADD `waiting_since` integer;--> statement-breakpoint
ALTER TABLE `webhook_deliveries` ADD `succeeded_at` integer;--> statement-breakpoint
ALTER TABLE `webhook_deliveries` ADD `trace_id` text;--> statement-breakpoint
ALTER TABLE `webhook_deliveries` ADD `trace_flags` text;--> statement-breakpoint
ALTER TABLE `webhook_deliveries` ADD `trace_state` text;--> statement-breakpoint
CREATE INDEX `webhook_deliveries_order_idx` ON `webhook_deliveries` (`subscription_id`,`payment_id`,`sequence`) WHERE ordered = 1 and (status = 'pending' or status = 'held');--> statement-breakpoint
ALTER TABLE `webhook_subscriptions` ADD `ordering` text DEFAULT 'none' NOT NULL;--> statement-breakpoint
ALTER TABLE `webhook_subscriptions` ADD `lag_alert_ms` integer DEFAULT 60000;--> statement-breakpoint
ALTER TABLE `webhook_subscriptions` ADD `lagging_since` integer;--> statement-breakpoint
ALTER TABLE `webhook_subscriptions` ADD `caught_up_since` integer;--> statement-breakpoint
ALTER TABLE `webhook_stats` ADD `lag` text DEFAULT '{}' NOT NULL;