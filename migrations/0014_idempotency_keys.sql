CREATE TABLE `idempotency_keys` (
	`account_id` text NOT NULL,
	`username` text NOT NULL,
	`key` text NOT NULL,
	`request_hash` text NOT NULL,
	`token` text NOT NULL,
	`locked_until` integer NOT NULL,
	`status` integer,
	`body` text,
	`sealed` integer DEFAULT 0 NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`account_id`, `username`, `key`)
);
--> statement-breakpoint
CREATE INDEX `idempotency_keys_created` ON `idempotency_keys` (`created_at`);