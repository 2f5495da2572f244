DROP INDEX `payment_invoices_invoice_idx`;--> statement-breakpoint
DROP INDEX `webhook_deliveries_status_idx`;--> statement-breakpoint
DROP INDEX `webhook_deliveries_payment_idx`;--> statement-breakpoint
DROP INDEX `webhook_deliveries_log_idx`;--> statement-breakpoint
DROP INDEX `webhook_deliveries_due_idx`;--> statement-breakpoint
CREATE INDEX `webhook_deliveries_held_idx` ON `webhook_deliveries` (`subscription_id`,`status`,`created_at`,`id`) WHERE status = 'failed' or status = 'held';--> statement-breakpoint
CREATE INDEX `webhook_deliveries_log_idx` ON `webhook_deliveries` (`subscription_id`,`created_at`,`id`,`status`);--> statement-breakpoint
CREATE INDEX `webhook_deliveries_due_idx` ON `webhook_deliveries` (`next_attempt_at`) WHERE status = 'pending';