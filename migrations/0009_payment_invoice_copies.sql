ALTER TABLE `payment_invoices` ADD `invoice_number` text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE `payment_invoices` ADD `amount_cents` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `payment_invoices` ADD `invoice_created_at` integer DEFAULT 0 NOT NULL;