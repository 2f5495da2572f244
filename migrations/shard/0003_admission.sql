ALTER TABLE `webhook_subscriptions` ADD `held_until` integer;--> statement-breakpoint
ALTER TABLE `webhook_subscriptions` ADD `recent_timeouts` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `webhook_subscriptions` ADD `recent_answers` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `webhook_subscriptions` ADD `recent_since` integer;--> statement-breakpoint
CREATE INDEX `webhook_deliveries_claimed_idx` ON `webhook_deliveries` (`subscription_id`,`claimed_until`) WHERE claimed_until is not null;