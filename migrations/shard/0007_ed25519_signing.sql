ALTER TABLE `webhook_subscriptions` ADD `signing` text DEFAULT 'hmac' NOT NULL;--> statement-breakpoint
ALTER TABLE `webhook_subscriptions` ADD `signing_key` text;--> statement-breakpoint
ALTER TABLE `webhook_subscriptions` ADD `previous_signing_key` text;--> statement-breakpoint
ALTER TABLE `webhook_subscriptions` ADD `public_key` text;--> statement-breakpoint
ALTER TABLE `webhook_subscriptions` ADD `previous_public_key` text;