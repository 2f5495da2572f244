-- webhook_deliveries keyed by its subscription's log order (subscription_id, created_at, id),
-- WITHOUT ROWID: the log is the table, so a delivery writes its row, its id and its due entry (the
-- log index is gone). webhook_attempts, which refers to it, is set aside and made again (WITHOUT
-- ROWID, keyed by delivery and number) so that no foreign key stops the old table's drop. Dropping
-- the tables dropped their move triggers; they are made again.
CREATE TABLE `__attempts_kept` AS SELECT * FROM `webhook_attempts`;--> statement-breakpoint
DROP TABLE `webhook_attempts`;--> statement-breakpoint
CREATE TABLE `__new_webhook_deliveries` (
	`id` text NOT NULL,
	`subscription_id` text NOT NULL,
	`account_id` text NOT NULL,
	`payment_id` text NOT NULL,
	`event_id` text,
	`body` text NOT NULL,
	`flags` integer,
	`content_type` text DEFAULT 'application/json' NOT NULL,
	`status` text NOT NULL,
	`attempts` integer NOT NULL,
	`next_attempt_at` integer,
	`schedule_started_at` integer,
	`schedule_first_attempt` integer,
	`enqueued_at` integer,
	`claimed_until` integer,
	`claim_token` text,
	`sequence` integer,
	`payment_version` integer,
	`test` integer DEFAULT false NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`event` text,
	`first_started_at` integer,
	`first_duration_ms` integer,
	`first_response_status` integer,
	`first_error` text,
	`first_response_excerpt` text,
	`first_ended` integer,
	`first_headers` text,
	PRIMARY KEY(`subscription_id`, `created_at`, `id`),
	FOREIGN KEY (`subscription_id`) REFERENCES `webhook_subscriptions`(`id`) ON UPDATE no action ON DELETE no action
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `__new_webhook_deliveries`("id", "subscription_id", "account_id", "payment_id", "event_id", "body", "flags", "content_type", "status", "attempts", "next_attempt_at", "schedule_started_at", "schedule_first_attempt", "enqueued_at", "claimed_until", "claim_token", "sequence", "payment_version", "test", "created_at", "updated_at", "event", "first_started_at", "first_duration_ms", "first_response_status", "first_error", "first_response_excerpt", "first_ended", "first_headers") SELECT "id", "subscription_id", "account_id", "payment_id", "event_id", "body", "flags", "content_type", "status", "attempts", "next_attempt_at", "schedule_started_at", "schedule_first_attempt", "enqueued_at", "claimed_until", "claim_token", "sequence", "payment_version", "test", "created_at", "updated_at", "event", "first_started_at", "first_duration_ms", "first_response_status", "first_error", "first_response_excerpt", "first_ended", "first_headers" FROM `webhook_deliveries`;--> statement-breakpoint
DROP TABLE `webhook_deliveries`;--> statement-breakpoint
ALTER TABLE `__new_webhook_deliveries` RENAME TO `webhook_deliveries`;--> statement-breakpoint
CREATE UNIQUE INDEX `webhook_deliveries_id_uq` ON `webhook_deliveries` (`id`);--> statement-breakpoint
CREATE INDEX `webhook_deliveries_due_idx` ON `webhook_deliveries` (`next_attempt_at`) WHERE status = 'pending';--> statement-breakpoint
CREATE INDEX `webhook_deliveries_held_idx` ON `webhook_deliveries` (`subscription_id`,`status`,`created_at`,`id`) WHERE status = 'failed' or status = 'held';--> statement-breakpoint
CREATE INDEX `webhook_deliveries_claimed_idx` ON `webhook_deliveries` (`subscription_id`,`claimed_until`) WHERE claimed_until is not null;
--> statement-breakpoint
CREATE TABLE `webhook_attempts` (
	`delivery_id` text NOT NULL,
	`number` integer NOT NULL,
	`started_at` integer NOT NULL,
	`duration_ms` integer NOT NULL,
	`response_status` integer,
	`error` text,
	`response_excerpt` text,
	`ended` integer DEFAULT 1 NOT NULL,
	`headers` text,
	PRIMARY KEY(`delivery_id`, `number`),
	FOREIGN KEY (`delivery_id`) REFERENCES `webhook_deliveries`(`id`) ON UPDATE no action ON DELETE no action
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `webhook_attempts` SELECT * FROM `__attempts_kept`;--> statement-breakpoint
DROP TABLE `__attempts_kept`;--> statement-breakpoint
CREATE TRIGGER "move_webhook_deliveries_insert" AFTER INSERT ON "webhook_deliveries"
WHEN EXISTS (SELECT 1 FROM moves) BEGIN
  SELECT RAISE(ABORT, 'account is moving') FROM moves m WHERE m.account_id = NEW.account_id AND m.state in ('frozen', 'leaving');
  INSERT INTO move_log (account_id, tbl, key) SELECT m.account_id, 'webhook_deliveries', json_array(NEW."id") FROM moves m WHERE m.account_id = NEW.account_id AND m.state IN ('copying', 'draining');
END;
--> statement-breakpoint
CREATE TRIGGER "move_webhook_deliveries_update" AFTER UPDATE ON "webhook_deliveries"
WHEN EXISTS (SELECT 1 FROM moves) BEGIN
  SELECT RAISE(ABORT, 'account is moving') FROM moves m WHERE m.account_id = NEW.account_id AND m.state in ('frozen', 'leaving');
  INSERT INTO move_log (account_id, tbl, key) SELECT m.account_id, 'webhook_deliveries', json_array(NEW."id") FROM moves m WHERE m.account_id = NEW.account_id AND m.state IN ('copying', 'draining');
END;
--> statement-breakpoint
CREATE TRIGGER "move_webhook_deliveries_delete" AFTER DELETE ON "webhook_deliveries"
WHEN EXISTS (SELECT 1 FROM moves) BEGIN
  SELECT RAISE(ABORT, 'account is moving') FROM moves m WHERE m.account_id = OLD.account_id AND m.state = 'frozen';
  INSERT INTO move_log (account_id, tbl, key) SELECT m.account_id, 'webhook_deliveries', json_array(OLD."id") FROM moves m WHERE m.account_id = OLD.account_id AND m.state IN ('copying', 'draining');
END;
--> statement-breakpoint
CREATE TRIGGER "move_webhook_attempts_insert" AFTER INSERT ON "webhook_attempts"
WHEN EXISTS (SELECT 1 FROM moves) BEGIN
  SELECT RAISE(ABORT, 'account is moving') FROM moves m WHERE m.account_id = (select x.account_id from webhook_deliveries x where x.id = NEW.delivery_id) AND m.state in ('frozen', 'leaving');
  INSERT INTO move_log (account_id, tbl, key) SELECT m.account_id, 'webhook_attempts', json_array(NEW."delivery_id", NEW."number") FROM moves m WHERE m.account_id = (select x.account_id from webhook_deliveries x where x.id = NEW.delivery_id) AND m.state IN ('copying', 'draining');
END;
--> statement-breakpoint
CREATE TRIGGER "move_webhook_attempts_update" AFTER UPDATE ON "webhook_attempts"
WHEN EXISTS (SELECT 1 FROM moves) BEGIN
  SELECT RAISE(ABORT, 'account is moving') FROM moves m WHERE m.account_id = (select x.account_id from webhook_deliveries x where x.id = NEW.delivery_id) AND m.state in ('frozen', 'leaving');
  INSERT INTO move_log (account_id, tbl, key) SELECT m.account_id, 'webhook_attempts', json_array(NEW."delivery_id", NEW."number") FROM moves m WHERE m.account_id = (select x.account_id from webhook_deliveries x where x.id = NEW.delivery_id) AND m.state IN ('copying', 'draining');
END;
--> statement-breakpoint
CREATE TRIGGER "move_webhook_attempts_delete" AFTER DELETE ON "webhook_attempts"
WHEN EXISTS (SELECT 1 FROM moves) BEGIN
  SELECT RAISE(ABORT, 'account is moving') FROM moves m WHERE m.account_id = (select x.account_id from webhook_deliveries x where x.id = OLD.delivery_id) AND m.state = 'frozen';
  INSERT INTO move_log (account_id, tbl, key) SELECT m.account_id, 'webhook_attempts', json_array(OLD."delivery_id", OLD."number") FROM moves m WHERE m.account_id = (select x.account_id from webhook_deliveries x where x.id = OLD.delivery_id) AND m.state IN ('copying', 'draining');
END;

