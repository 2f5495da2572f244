ALTER TABLE `webhook_deliveries` ADD `first_started_at` integer;--> statement-breakpoint
ALTER TABLE `webhook_deliveries` ADD `first_duration_ms` integer;--> statement-breakpoint
ALTER TABLE `webhook_deliveries` ADD `first_response_status` integer;--> statement-breakpoint
ALTER TABLE `webhook_deliveries` ADD `first_error` text;--> statement-breakpoint
ALTER TABLE `webhook_deliveries` ADD `first_response_excerpt` text;--> statement-breakpoint
ALTER TABLE `webhook_deliveries` ADD `first_ended` integer;--> statement-breakpoint
ALTER TABLE `webhook_deliveries` ADD `first_headers` text;