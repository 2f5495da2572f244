CREATE TABLE `time_counts` (
	`account_id` text NOT NULL,
	`key` text NOT NULL,
	`size` integer NOT NULL,
	`bucket` integer NOT NULL,
	`n` integer NOT NULL,
	PRIMARY KEY(`account_id`, `key`, `size`, `bucket`)
);
