CREATE TABLE `accounts` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `accounts_created_idx` ON `accounts` (`created_at`,`id`);--> statement-breakpoint
CREATE TABLE `api_users` (
	`username` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`role` text NOT NULL,
	`password_hash` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `api_users_account_idx` ON `api_users` (`account_id`);--> statement-breakpoint
CREATE TABLE `counterparties` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`internal_id` text NOT NULL,
	`type` text NOT NULL,
	`name` text NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `counterparties_internal_id_uq` ON `counterparties` (`account_id`,`type`,`internal_id`);--> statement-breakpoint
CREATE INDEX `counterparties_internal_id_idx` ON `counterparties` (`account_id`,`internal_id`);--> statement-breakpoint
CREATE INDEX `counterparties_created_idx` ON `counterparties` (`account_id`,`created_at`,`id`);--> statement-breakpoint
CREATE TABLE `invoices` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`invoice_number` text NOT NULL,
	`buyer_id` text NOT NULL,
	`supplier_id` text NOT NULL,
	`amount_cents` integer NOT NULL,
	`currency` text NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`buyer_id`) REFERENCES `counterparties`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`supplier_id`) REFERENCES `counterparties`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `invoices_created_idx` ON `invoices` (`account_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `invoices_number_idx` ON `invoices` (`account_id`,`invoice_number`,`created_at`,`id`);--> statement-breakpoint
CREATE TABLE `list_counts` (
	`account_id` text NOT NULL,
	`resource` text NOT NULL,
	`n` integer NOT NULL,
	PRIMARY KEY(`account_id`, `resource`)
);
--> statement-breakpoint
CREATE TABLE `payment_events` (
	`id` text PRIMARY KEY NOT NULL,
	`payment_id` text NOT NULL,
	`seq` integer NOT NULL,
	`event_code` text NOT NULL,
	`status` text NOT NULL,
	`description` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`payment_id`) REFERENCES `payments`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `payment_events_seq_uq` ON `payment_events` (`payment_id`,`seq`);--> statement-breakpoint
CREATE TABLE `payment_invoices` (
	`payment_id` text NOT NULL,
	`invoice_id` text NOT NULL,
	`active` integer NOT NULL,
	PRIMARY KEY(`payment_id`, `invoice_id`),
	FOREIGN KEY (`payment_id`) REFERENCES `payments`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`invoice_id`) REFERENCES `invoices`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `payment_invoices_claim_uq` ON `payment_invoices` (`invoice_id`) WHERE active = 1;--> statement-breakpoint
CREATE INDEX `payment_invoices_invoice_idx` ON `payment_invoices` (`invoice_id`);--> statement-breakpoint
CREATE TABLE `payments` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`originating_counterparty_id` text NOT NULL,
	`receiving_counterparty_id` text NOT NULL,
	`amount_cents` integer NOT NULL,
	`currency` text NOT NULL,
	`payment_method` text NOT NULL,
	`status` text NOT NULL,
	`instrument_number` text,
	`refund_reason` text,
	`version` integer NOT NULL,
	`write_token` text NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`originating_counterparty_id`) REFERENCES `counterparties`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`receiving_counterparty_id`) REFERENCES `counterparties`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `payments_created_idx` ON `payments` (`account_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `payments_updated_idx` ON `payments` (`account_id`,`updated_at`,`id`);--> statement-breakpoint
CREATE INDEX `payments_status_idx` ON `payments` (`account_id`,`status`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `payments_originating_idx` ON `payments` (`account_id`,`originating_counterparty_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `payments_receiving_idx` ON `payments` (`account_id`,`receiving_counterparty_id`,`created_at`,`id`);