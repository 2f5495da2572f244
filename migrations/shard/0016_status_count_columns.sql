-- A payment status's counts become columns of the payments' own count rows (db/schema/status-counts.ts).
ALTER TABLE `list_counts` ADD `pending` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `list_counts` ADD `in_progress` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `list_counts` ADD `settled` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `list_counts` ADD `canceled` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `list_counts` ADD `failed` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `list_counts` ADD `refunded` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `time_counts` ADD `pending` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `time_counts` ADD `in_progress` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `time_counts` ADD `settled` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `time_counts` ADD `canceled` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `time_counts` ADD `failed` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `time_counts` ADD `refunded` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
UPDATE `list_counts` SET
  `pending` = coalesce((SELECT s.`n` FROM `list_counts` s WHERE s.`account_id` = `list_counts`.`account_id` AND s.`resource` = 'payments/status=pending'), 0),
  `in_progress` = coalesce((SELECT s.`n` FROM `list_counts` s WHERE s.`account_id` = `list_counts`.`account_id` AND s.`resource` = 'payments/status=in-progress'), 0),
  `settled` = coalesce((SELECT s.`n` FROM `list_counts` s WHERE s.`account_id` = `list_counts`.`account_id` AND s.`resource` = 'payments/status=settled'), 0),
  `canceled` = coalesce((SELECT s.`n` FROM `list_counts` s WHERE s.`account_id` = `list_counts`.`account_id` AND s.`resource` = 'payments/status=canceled'), 0),
  `failed` = coalesce((SELECT s.`n` FROM `list_counts` s WHERE s.`account_id` = `list_counts`.`account_id` AND s.`resource` = 'payments/status=failed'), 0),
  `refunded` = coalesce((SELECT s.`n` FROM `list_counts` s WHERE s.`account_id` = `list_counts`.`account_id` AND s.`resource` = 'payments/status=refunded'), 0)
WHERE `resource` = 'payments';--> statement-breakpoint
DELETE FROM `list_counts` WHERE `resource` LIKE 'payments/status=%';--> statement-breakpoint
UPDATE `time_counts` SET
  `pending` = coalesce((SELECT s.`n` FROM `time_counts` s WHERE s.`account_id` = `time_counts`.`account_id` AND s.`key` = 'payments.created_at|status=pending' AND s.`size` = `time_counts`.`size` AND s.`bucket` = `time_counts`.`bucket`), 0),
  `in_progress` = coalesce((SELECT s.`n` FROM `time_counts` s WHERE s.`account_id` = `time_counts`.`account_id` AND s.`key` = 'payments.created_at|status=in-progress' AND s.`size` = `time_counts`.`size` AND s.`bucket` = `time_counts`.`bucket`), 0),
  `settled` = coalesce((SELECT s.`n` FROM `time_counts` s WHERE s.`account_id` = `time_counts`.`account_id` AND s.`key` = 'payments.created_at|status=settled' AND s.`size` = `time_counts`.`size` AND s.`bucket` = `time_counts`.`bucket`), 0),
  `canceled` = coalesce((SELECT s.`n` FROM `time_counts` s WHERE s.`account_id` = `time_counts`.`account_id` AND s.`key` = 'payments.created_at|status=canceled' AND s.`size` = `time_counts`.`size` AND s.`bucket` = `time_counts`.`bucket`), 0),
  `failed` = coalesce((SELECT s.`n` FROM `time_counts` s WHERE s.`account_id` = `time_counts`.`account_id` AND s.`key` = 'payments.created_at|status=failed' AND s.`size` = `time_counts`.`size` AND s.`bucket` = `time_counts`.`bucket`), 0),
  `refunded` = coalesce((SELECT s.`n` FROM `time_counts` s WHERE s.`account_id` = `time_counts`.`account_id` AND s.`key` = 'payments.created_at|status=refunded' AND s.`size` = `time_counts`.`size` AND s.`bucket` = `time_counts`.`bucket`), 0)
WHERE `key` = 'payments.created_at';--> statement-breakpoint
DELETE FROM `time_counts` WHERE `key` LIKE 'payments.created_at|status=%';
--> statement-breakpoint
-- A Worker still on the code before this migration (between `db:migrate` and `deploy`) would count
-- a status in the rows just folded away, which nothing reads any more: its write fails instead, and
-- its client retries it against the new code.
CREATE TRIGGER `list_counts_status_in_columns` BEFORE INSERT ON `list_counts`
WHEN NEW.`resource` LIKE 'payments/status=%' BEGIN
  SELECT RAISE(ABORT, 'payment status counts are columns of the payments row');
END;--> statement-breakpoint
CREATE TRIGGER `time_counts_status_in_columns` BEFORE INSERT ON `time_counts`
WHEN NEW.`key` LIKE 'payments.created_at|status=%' BEGIN
  SELECT RAISE(ABORT, 'payment status counts are columns of the created buckets');
END;
