CREATE TABLE `auth_failures` (
	`key` text PRIMARY KEY NOT NULL,
	`window_start` integer NOT NULL,
	`failures` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `auth_failures_window_idx` ON `auth_failures` (`window_start`);