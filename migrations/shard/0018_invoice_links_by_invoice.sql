-- payment_invoices keyed by the invoice and its claim ('' while the payment holds the invoice, else
-- the payment's id): a link is one row, where the claim's own unique index made it two. Dropping the
-- table dropped its claim index and move triggers; the triggers are made again below.
PRAGMA foreign_keys=OFF;--> statement-breakpoint
CREATE TABLE `__new_payment_invoices` (
	`invoice_id` text NOT NULL,
	`claim` text NOT NULL,
	`payment_id` text NOT NULL,
	`invoice_number` text DEFAULT '' NOT NULL,
	`amount_cents` integer DEFAULT 0 NOT NULL,
	`invoice_created_at` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`invoice_id`, `claim`),
	FOREIGN KEY (`invoice_id`) REFERENCES `invoices`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`payment_id`) REFERENCES `payments`(`id`) ON UPDATE no action ON DELETE no action
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `__new_payment_invoices`("invoice_id", "claim", "payment_id", "invoice_number", "amount_cents", "invoice_created_at") SELECT "invoice_id", CASE WHEN "active" = 1 THEN '' ELSE "payment_id" END, "payment_id", "invoice_number", "amount_cents", "invoice_created_at" FROM `payment_invoices`;--> statement-breakpoint
DROP TABLE `payment_invoices`;--> statement-breakpoint
ALTER TABLE `__new_payment_invoices` RENAME TO `payment_invoices`;--> statement-breakpoint
CREATE TRIGGER "move_payment_invoices_insert" AFTER INSERT ON "payment_invoices"
WHEN EXISTS (SELECT 1 FROM moves) BEGIN
  SELECT RAISE(ABORT, 'account is moving') FROM moves m WHERE m.account_id = (select x.account_id from invoices x where x.id = NEW.invoice_id) AND m.state in ('frozen', 'leaving');
  INSERT INTO move_log (account_id, tbl, key) SELECT m.account_id, 'payment_invoices', json_array(NEW."invoice_id", NEW."claim") FROM moves m WHERE m.account_id = (select x.account_id from invoices x where x.id = NEW.invoice_id) AND m.state IN ('copying', 'draining');
END;
--> statement-breakpoint
CREATE TRIGGER "move_payment_invoices_update" AFTER UPDATE ON "payment_invoices"
WHEN EXISTS (SELECT 1 FROM moves) BEGIN
  SELECT RAISE(ABORT, 'account is moving') FROM moves m WHERE m.account_id = (select x.account_id from invoices x where x.id = NEW.invoice_id) AND m.state in ('frozen', 'leaving');
  INSERT INTO move_log (account_id, tbl, key) SELECT m.account_id, 'payment_invoices', json_array(NEW."invoice_id", NEW."claim") FROM moves m WHERE m.account_id = (select x.account_id from invoices x where x.id = NEW.invoice_id) AND m.state IN ('copying', 'draining');
END;
--> statement-breakpoint
CREATE TRIGGER "move_payment_invoices_delete" AFTER DELETE ON "payment_invoices"
WHEN EXISTS (SELECT 1 FROM moves) BEGIN
  SELECT RAISE(ABORT, 'account is moving') FROM moves m WHERE m.account_id = (select x.account_id from invoices x where x.id = OLD.invoice_id) AND m.state = 'frozen';
  INSERT INTO move_log (account_id, tbl, key) SELECT m.account_id, 'payment_invoices', json_array(OLD."invoice_id", OLD."claim") FROM moves m WHERE m.account_id = (select x.account_id from invoices x where x.id = OLD.invoice_id) AND m.state IN ('copying', 'draining');
END;
--> statement-breakpoint
PRAGMA foreign_keys=ON;