ALTER TABLE `payment_events` ADD `instrument_number` text;--> statement-breakpoint
ALTER TABLE `payment_events` ADD `refund_reason` text;--> statement-breakpoint
ALTER TABLE `webhook_deliveries` ADD `flags` integer;