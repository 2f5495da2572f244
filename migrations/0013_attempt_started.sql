ALTER TABLE `webhook_attempts` ADD `ended` integer DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE `webhook_deliveries` ADD `claim_token` text;