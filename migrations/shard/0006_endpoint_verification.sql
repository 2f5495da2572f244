ALTER TABLE `webhook_subscriptions` ADD `verification` text DEFAULT 'not_required' NOT NULL;--> statement-breakpoint
ALTER TABLE `webhook_subscriptions` ADD `verification_started_at` integer;--> statement-breakpoint
ALTER TABLE `webhook_subscriptions` ADD `verification_attempts` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `webhook_subscriptions` ADD `verification_next_at` integer;--> statement-breakpoint
CREATE INDEX `webhook_subscriptions_verification_idx` ON `webhook_subscriptions` (`verification_next_at`) WHERE verification = 'pending';