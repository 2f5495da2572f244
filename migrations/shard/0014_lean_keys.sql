-- time_counts, list_counts and payment_invoices keyed WITHOUT ROWID: a new bucket, count or invoice
-- link is one row and no separate key entry. Dropping each table dropped its move triggers; they
-- are made again below.
CREATE TABLE `__new_time_counts` (
	`account_id` text NOT NULL,
	`key` text NOT NULL,
	`size` integer NOT NULL,
	`bucket` integer NOT NULL,
	`n` integer NOT NULL,
	PRIMARY KEY(`account_id`, `key`, `size`, `bucket`)
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `__new_time_counts` SELECT `account_id`, `key`, `size`, `bucket`, `n` FROM `time_counts`;--> statement-breakpoint
DROP TABLE `time_counts`;--> statement-breakpoint
ALTER TABLE `__new_time_counts` RENAME TO `time_counts`;--> statement-breakpoint
CREATE TABLE `__new_list_counts` (
	`account_id` text NOT NULL,
	`resource` text NOT NULL,
	`n` integer NOT NULL,
	PRIMARY KEY(`account_id`, `resource`)
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `__new_list_counts` SELECT `account_id`, `resource`, `n` FROM `list_counts`;--> statement-breakpoint
DROP TABLE `list_counts`;--> statement-breakpoint
ALTER TABLE `__new_list_counts` RENAME TO `list_counts`;--> statement-breakpoint
CREATE TABLE `__new_payment_invoices` (
	`payment_id` text NOT NULL,
	`invoice_id` text NOT NULL,
	`active` integer NOT NULL,
	`invoice_number` text DEFAULT '' NOT NULL,
	`amount_cents` integer DEFAULT 0 NOT NULL,
	`invoice_created_at` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`payment_id`, `invoice_id`),
	FOREIGN KEY (`payment_id`) REFERENCES `payments`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`invoice_id`) REFERENCES `invoices`(`id`) ON UPDATE no action ON DELETE no action
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `__new_payment_invoices` SELECT `payment_id`, `invoice_id`, `active`, `invoice_number`, `amount_cents`, `invoice_created_at` FROM `payment_invoices`;--> statement-breakpoint
DROP TABLE `payment_invoices`;--> statement-breakpoint
ALTER TABLE `__new_payment_invoices` RENAME TO `payment_invoices`;--> statement-breakpoint
CREATE UNIQUE INDEX `payment_invoices_claim_uq` ON `payment_invoices` (`invoice_id`) WHERE active = 1;--> statement-breakpoint
CREATE TRIGGER "move_payment_invoices_insert" AFTER INSERT ON "payment_invoices"
WHEN EXISTS (SELECT 1 FROM moves) BEGIN
  SELECT RAISE(ABORT, 'account is moving') FROM moves m WHERE m.account_id = (select x.account_id from payments x where x.id = NEW.payment_id) AND m.state in ('frozen', 'leaving');
  INSERT INTO move_log (account_id, tbl, key) SELECT m.account_id, 'payment_invoices', json_array(NEW."payment_id", NEW."invoice_id") FROM moves m WHERE m.account_id = (select x.account_id from payments x where x.id = NEW.payment_id) AND m.state IN ('copying', 'draining');
END;
--> statement-breakpoint
CREATE TRIGGER "move_payment_invoices_update" AFTER UPDATE ON "payment_invoices"
WHEN EXISTS (SELECT 1 FROM moves) BEGIN
  SELECT RAISE(ABORT, 'account is moving') FROM moves m WHERE m.account_id = (select x.account_id from payments x where x.id = NEW.payment_id) AND m.state in ('frozen', 'leaving');
  INSERT INTO move_log (account_id, tbl, key) SELECT m.account_id, 'payment_invoices', json_array(NEW."payment_id", NEW."invoice_id") FROM moves m WHERE m.account_id = (select x.account_id from payments x where x.id = NEW.payment_id) AND m.state IN ('copying', 'draining');
END;
--> statement-breakpoint
CREATE TRIGGER "move_payment_invoices_delete" AFTER DELETE ON "payment_invoices"
WHEN EXISTS (SELECT 1 FROM moves) BEGIN
  SELECT RAISE(ABORT, 'account is moving') FROM moves m WHERE m.account_id = (select x.account_id from payments x where x.id = OLD.payment_id) AND m.state = 'frozen';
  INSERT INTO move_log (account_id, tbl, key) SELECT m.account_id, 'payment_invoices', json_array(OLD."payment_id", OLD."invoice_id") FROM moves m WHERE m.account_id = (select x.account_id from payments x where x.id = OLD.payment_id) AND m.state IN ('copying', 'draining');
END;
--> statement-breakpoint
CREATE TRIGGER "move_list_counts_insert" AFTER INSERT ON "list_counts"
WHEN EXISTS (SELECT 1 FROM moves) BEGIN
  SELECT RAISE(ABORT, 'account is moving') FROM moves m WHERE m.account_id = NEW.account_id AND m.state in ('frozen', 'leaving');
  INSERT INTO move_log (account_id, tbl, key) SELECT m.account_id, 'list_counts', json_array(NEW."account_id", NEW."resource") FROM moves m WHERE m.account_id = NEW.account_id AND m.state IN ('copying', 'draining');
END;
--> statement-breakpoint
CREATE TRIGGER "move_list_counts_update" AFTER UPDATE ON "list_counts"
WHEN EXISTS (SELECT 1 FROM moves) BEGIN
  SELECT RAISE(ABORT, 'account is moving') FROM moves m WHERE m.account_id = NEW.account_id AND m.state in ('frozen', 'leaving');
  INSERT INTO move_log (account_id, tbl, key) SELECT m.account_id, 'list_counts', json_array(NEW."account_id", NEW."resource") FROM moves m WHERE m.account_id = NEW.account_id AND m.state IN ('copying', 'draining');
END;
--> statement-breakpoint
CREATE TRIGGER "move_list_counts_delete" AFTER DELETE ON "list_counts"
WHEN EXISTS (SELECT 1 FROM moves) BEGIN
  SELECT RAISE(ABORT, 'account is moving') FROM moves m WHERE m.account_id = OLD.account_id AND m.state = 'frozen';
  INSERT INTO move_log (account_id, tbl, key) SELECT m.account_id, 'list_counts', json_array(OLD."account_id", OLD."resource") FROM moves m WHERE m.account_id = OLD.account_id AND m.state IN ('copying', 'draining');
END;
--> statement-breakpoint
CREATE TRIGGER "move_time_counts_insert" AFTER INSERT ON "time_counts"
WHEN EXISTS (SELECT 1 FROM moves) BEGIN
  SELECT RAISE(ABORT, 'account is moving') FROM moves m WHERE m.account_id = NEW.account_id AND m.state in ('frozen', 'leaving');
  INSERT INTO move_log (account_id, tbl, key) SELECT m.account_id, 'time_counts', json_array(NEW."account_id", NEW."key", NEW."size", NEW."bucket") FROM moves m WHERE m.account_id = NEW.account_id AND m.state IN ('copying', 'draining');
END;
--> statement-breakpoint
CREATE TRIGGER "move_time_counts_update" AFTER UPDATE ON "time_counts"
WHEN EXISTS (SELECT 1 FROM moves) BEGIN
  SELECT RAISE(ABORT, 'account is moving') FROM moves m WHERE m.account_id = NEW.account_id AND m.state in ('frozen', 'leaving');
  INSERT INTO move_log (account_id, tbl, key) SELECT m.account_id, 'time_counts', json_array(NEW."account_id", NEW."key", NEW."size", NEW."bucket") FROM moves m WHERE m.account_id = NEW.account_id AND m.state IN ('copying', 'draining');
END;
--> statement-breakpoint
CREATE TRIGGER "move_time_counts_delete" AFTER DELETE ON "time_counts"
WHEN EXISTS (SELECT 1 FROM moves) BEGIN
  SELECT RAISE(ABORT, 'account is moving') FROM moves m WHERE m.account_id = OLD.account_id AND m.state = 'frozen';
  INSERT INTO move_log (account_id, tbl, key) SELECT m.account_id, 'time_counts', json_array(OLD."account_id", OLD."key", OLD."size", OLD."bucket") FROM moves m WHERE m.account_id = OLD.account_id AND m.state IN ('copying', 'draining');
END;

