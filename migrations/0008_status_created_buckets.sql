-- Custom SQL migration file, put your code below! --
-- Each payment status's own created buckets (services/time-counts: createdWithStatus), built once
-- from the payments that exist; from here on each payment write keeps them in its own batch.
INSERT INTO time_counts SELECT account_id, 'payments.created_at|status=' || status, 2592000000, (created_at / 2592000000) * 2592000000, count(*) FROM payments GROUP BY 1, 2, 3, 4;
--> statement-breakpoint
INSERT INTO time_counts SELECT account_id, 'payments.created_at|status=' || status, 86400000, (created_at / 86400000) * 86400000, count(*) FROM payments GROUP BY 1, 2, 3, 4;
--> statement-breakpoint
INSERT INTO time_counts SELECT account_id, 'payments.created_at|status=' || status, 3600000, (created_at / 3600000) * 3600000, count(*) FROM payments GROUP BY 1, 2, 3, 4;
--> statement-breakpoint
INSERT INTO time_counts SELECT account_id, 'payments.created_at|status=' || status, 60000, (created_at / 60000) * 60000, count(*) FROM payments GROUP BY 1, 2, 3, 4;
--> statement-breakpoint
INSERT INTO time_counts SELECT account_id, 'payments.created_at|status=' || status, 1000, (created_at / 1000) * 1000, count(*) FROM payments GROUP BY 1, 2, 3, 4;
