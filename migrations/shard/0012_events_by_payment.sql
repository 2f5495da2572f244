-- payment_events keyed by (payment_id, seq), WITHOUT ROWID: an event is one row and no index entry.
-- Dropping the old table dropped its move triggers; they are made again over the new key.
CREATE TABLE `__new_payment_events` (
	`id` text NOT NULL,
	`payment_id` text NOT NULL,
	`seq` integer NOT NULL,
	`event_code` text NOT NULL,
	`status` text NOT NULL,
	`description` text NOT NULL,
	`instrument_number` text,
	`refund_reason` text,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`payment_id`, `seq`),
	FOREIGN KEY (`payment_id`) REFERENCES `payments`(`id`) ON UPDATE no action ON DELETE no action
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `__new_payment_events`("id", "payment_id", "seq", "event_code", "status", "description", "instrument_number", "refund_reason", "created_at") SELECT "id", "payment_id", "seq", "event_code", "status", "description", "instrument_number", "refund_reason", "created_at" FROM `payment_events`;--> statement-breakpoint
DROP TABLE `payment_events`;--> statement-breakpoint
ALTER TABLE `__new_payment_events` RENAME TO `payment_events`;--> statement-breakpoint
CREATE TRIGGER "move_payment_events_insert" AFTER INSERT ON "payment_events"
WHEN EXISTS (SELECT 1 FROM moves) BEGIN
  SELECT RAISE(ABORT, 'account is moving') FROM moves m WHERE m.account_id = (select x.account_id from payments x where x.id = NEW.payment_id) AND m.state in ('frozen', 'leaving');
  INSERT INTO move_log (account_id, tbl, key) SELECT m.account_id, 'payment_events', json_array(NEW."payment_id", NEW."seq") FROM moves m WHERE m.account_id = (select x.account_id from payments x where x.id = NEW.payment_id) AND m.state IN ('copying', 'draining');
END;
--> statement-breakpoint
CREATE TRIGGER "move_payment_events_update" AFTER UPDATE ON "payment_events"
WHEN EXISTS (SELECT 1 FROM moves) BEGIN
  SELECT RAISE(ABORT, 'account is moving') FROM moves m WHERE m.account_id = (select x.account_id from payments x where x.id = NEW.payment_id) AND m.state in ('frozen', 'leaving');
  INSERT INTO move_log (account_id, tbl, key) SELECT m.account_id, 'payment_events', json_array(NEW."payment_id", NEW."seq") FROM moves m WHERE m.account_id = (select x.account_id from payments x where x.id = NEW.payment_id) AND m.state IN ('copying', 'draining');
END;
--> statement-breakpoint
CREATE TRIGGER "move_payment_events_delete" AFTER DELETE ON "payment_events"
WHEN EXISTS (SELECT 1 FROM moves) BEGIN
  SELECT RAISE(ABORT, 'account is moving') FROM moves m WHERE m.account_id = (select x.account_id from payments x where x.id = OLD.payment_id) AND m.state = 'frozen';
  INSERT INTO move_log (account_id, tbl, key) SELECT m.account_id, 'payment_events', json_array(OLD."payment_id", OLD."seq") FROM moves m WHERE m.account_id = (select x.account_id from payments x where x.id = OLD.payment_id) AND m.state IN ('copying', 'draining');
END;

