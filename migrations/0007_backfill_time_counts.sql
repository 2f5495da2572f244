-- Custom SQL migration file, put your code below! --
-- Time buckets (db/schema/time-counts, lib/time-buckets) built once from the rows that exist;
-- from here on each write keeps them in its own batch.
INSERT INTO time_counts SELECT account_id, 'invoices.created_at', 2592000000, (created_at / 2592000000) * 2592000000, count(*) FROM invoices GROUP BY 1, 2, 3, 4;
--> statement-breakpoint
INSERT INTO time_counts SELECT account_id, 'invoices.created_at', 86400000, (created_at / 86400000) * 86400000, count(*) FROM invoices GROUP BY 1, 2, 3, 4;
--> statement-breakpoint
INSERT INTO time_counts SELECT account_id, 'invoices.created_at', 3600000, (created_at / 3600000) * 3600000, count(*) FROM invoices GROUP BY 1, 2, 3, 4;
--> statement-breakpoint
INSERT INTO time_counts SELECT account_id, 'invoices.created_at', 60000, (created_at / 60000) * 60000, count(*) FROM invoices GROUP BY 1, 2, 3, 4;
--> statement-breakpoint
INSERT INTO time_counts SELECT account_id, 'invoices.created_at', 1000, (created_at / 1000) * 1000, count(*) FROM invoices GROUP BY 1, 2, 3, 4;
--> statement-breakpoint
INSERT INTO time_counts SELECT account_id, 'payments.created_at', 2592000000, (created_at / 2592000000) * 2592000000, count(*) FROM payments GROUP BY 1, 2, 3, 4;
--> statement-breakpoint
INSERT INTO time_counts SELECT account_id, 'payments.created_at', 86400000, (created_at / 86400000) * 86400000, count(*) FROM payments GROUP BY 1, 2, 3, 4;
--> statement-breakpoint
INSERT INTO time_counts SELECT account_id, 'payments.created_at', 3600000, (created_at / 3600000) * 3600000, count(*) FROM payments GROUP BY 1, 2, 3, 4;
--> statement-breakpoint
INSERT INTO time_counts SELECT account_id, 'payments.created_at', 60000, (created_at / 60000) * 60000, count(*) FROM payments GROUP BY 1, 2, 3, 4;
--> statement-breakpoint
INSERT INTO time_counts SELECT account_id, 'payments.created_at', 1000, (created_at / 1000) * 1000, count(*) FROM payments GROUP BY 1, 2, 3, 4;
--> statement-breakpoint
INSERT INTO time_counts SELECT account_id, 'payments.updated_at', 2592000000, (updated_at / 2592000000) * 2592000000, count(*) FROM payments GROUP BY 1, 2, 3, 4;
--> statement-breakpoint
INSERT INTO time_counts SELECT account_id, 'payments.updated_at', 86400000, (updated_at / 86400000) * 86400000, count(*) FROM payments GROUP BY 1, 2, 3, 4;
--> statement-breakpoint
INSERT INTO time_counts SELECT account_id, 'payments.updated_at', 3600000, (updated_at / 3600000) * 3600000, count(*) FROM payments GROUP BY 1, 2, 3, 4;
--> statement-breakpoint
INSERT INTO time_counts SELECT account_id, 'payments.updated_at', 60000, (updated_at / 60000) * 60000, count(*) FROM payments GROUP BY 1, 2, 3, 4;
--> statement-breakpoint
INSERT INTO time_counts SELECT account_id, 'payments.updated_at', 1000, (updated_at / 1000) * 1000, count(*) FROM payments GROUP BY 1, 2, 3, 4;
