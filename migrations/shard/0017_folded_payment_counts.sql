ALTER TABLE `list_counts` ADD `counted_to` integer;--> statement-breakpoint
ALTER TABLE `time_counts` ADD `counted_to` integer;--> statement-breakpoint
-- Every payment count so far counts every change up to the account's latest stamp.
UPDATE `list_counts` SET `counted_to` = coalesce((SELECT max(p.`updated_at`) FROM `payments` p WHERE p.`account_id` = `list_counts`.`account_id`), 0)
WHERE `resource` = 'payments' OR `resource` LIKE 'payments/%';--> statement-breakpoint
UPDATE `time_counts` SET `counted_to` = coalesce((SELECT max(p.`updated_at`) FROM `payments` p WHERE p.`account_id` = `time_counts`.`account_id`), 0)
WHERE `key` IN ('payments.created_at', 'payments.updated_moves');--> statement-breakpoint
-- A Worker still on the code before this migration (between `db:migrate` and `deploy`) would count
-- its payment changes at once, and the new code would count them again after the mark: its write
-- fails instead (it never sets `counted_to`), and its client retries it against the new code.
CREATE TRIGGER `list_counts_payments_folded_insert` BEFORE INSERT ON `list_counts`
WHEN (NEW.`resource` = 'payments' OR NEW.`resource` LIKE 'payments/%') AND NEW.`counted_to` IS NULL BEGIN
  SELECT RAISE(ABORT, 'payment counts are kept by their fold');
END;--> statement-breakpoint
CREATE TRIGGER `list_counts_payments_folded_update` BEFORE UPDATE ON `list_counts`
WHEN (NEW.`resource` = 'payments' OR NEW.`resource` LIKE 'payments/%') AND NEW.`counted_to` IS OLD.`counted_to`
  AND (NEW.`n`, NEW.`pending`, NEW.`in_progress`, NEW.`settled`, NEW.`canceled`, NEW.`failed`, NEW.`refunded`)
   IS NOT (OLD.`n`, OLD.`pending`, OLD.`in_progress`, OLD.`settled`, OLD.`canceled`, OLD.`failed`, OLD.`refunded`) BEGIN
  SELECT RAISE(ABORT, 'payment counts are kept by their fold');
END;--> statement-breakpoint
CREATE TRIGGER `time_counts_payments_folded_insert` BEFORE INSERT ON `time_counts`
WHEN NEW.`key` IN ('payments.created_at', 'payments.updated_moves') AND NEW.`counted_to` IS NULL BEGIN
  SELECT RAISE(ABORT, 'payment counts are kept by their fold');
END;--> statement-breakpoint
CREATE TRIGGER `time_counts_payments_folded_update` BEFORE UPDATE ON `time_counts`
WHEN NEW.`key` IN ('payments.created_at', 'payments.updated_moves') AND NEW.`counted_to` IS OLD.`counted_to`
  AND (NEW.`n`, NEW.`pending`, NEW.`in_progress`, NEW.`settled`, NEW.`canceled`, NEW.`failed`, NEW.`refunded`)
   IS NOT (OLD.`n`, OLD.`pending`, OLD.`in_progress`, OLD.`settled`, OLD.`canceled`, OLD.`failed`, OLD.`refunded`) BEGIN
  SELECT RAISE(ABORT, 'payment counts are kept by their fold');
END;
