-- A payment's `updated` is counted as its moves away from `created` (src/services/time-counts.ts):
-- the `payments.updated_at` buckets become `payments.updated_moves`, each less the `created` count
-- of the same bucket, and the buckets that come to nothing go.
INSERT INTO `time_counts` (`account_id`, `key`, `size`, `bucket`, `n`)
  SELECT `account_id`, 'payments.updated_moves', `size`, `bucket`, `n` FROM `time_counts` WHERE `key` = 'payments.updated_at';
--> statement-breakpoint
INSERT INTO `time_counts` (`account_id`, `key`, `size`, `bucket`, `n`)
  SELECT `account_id`, 'payments.updated_moves', `size`, `bucket`, -`n` FROM `time_counts` WHERE `key` = 'payments.created_at'
  ON CONFLICT (`account_id`, `key`, `size`, `bucket`) DO UPDATE SET `n` = `n` + excluded.`n`;
--> statement-breakpoint
DELETE FROM `time_counts` WHERE `key` = 'payments.updated_at' OR (`key` = 'payments.updated_moves' AND `n` = 0);
