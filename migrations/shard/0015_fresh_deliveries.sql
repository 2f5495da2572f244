-- The due index leaves out a pending delivery handed over at its creation and never since (the
-- happy path writes no entry in it); the sweeper finds a lost one of those on the logs, from the
-- `fresh` mark on (webhooks/outbox/fresh.ts). The pending rows of that kind made before this
-- migration go into the due index (their handover stamp moves 1 ms), and the mark starts now.
CREATE TABLE `sweep_marks` (
	`name` text PRIMARY KEY NOT NULL,
	`at` integer NOT NULL
);
--> statement-breakpoint
-- Read on the old due index (every pending row), before it goes.
UPDATE `webhook_deliveries` SET `enqueued_at` = `enqueued_at` + 1 WHERE `status` = 'pending' AND `enqueued_at` = `created_at`;--> statement-breakpoint
DROP INDEX `webhook_deliveries_due_idx`;--> statement-breakpoint
CREATE INDEX `webhook_deliveries_due_idx` ON `webhook_deliveries` (`next_attempt_at`) WHERE status = 'pending' and (enqueued_at is null or enqueued_at <> created_at);--> statement-breakpoint
INSERT INTO `sweep_marks` (`name`, `at`) VALUES ('fresh', CAST(strftime('%s', 'now') AS INTEGER) * 1000);
