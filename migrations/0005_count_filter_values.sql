-- Custom SQL migration file, put your code below! --
-- Stored counts per filter value (src/services/list-counts.ts), built once from the rows that exist;
-- from here on each write keeps them in its own batch.
INSERT OR REPLACE INTO list_counts SELECT account_id, 'counterparties/type=' || type, count(*) FROM counterparties GROUP BY account_id, type;--> statement-breakpoint
INSERT OR REPLACE INTO list_counts SELECT account_id, 'payments/status=' || status, count(*) FROM payments GROUP BY account_id, status;--> statement-breakpoint
INSERT OR REPLACE INTO list_counts SELECT account_id, 'payments/originating_counterparty_id=' || originating_counterparty_id, count(*) FROM payments GROUP BY account_id, originating_counterparty_id;--> statement-breakpoint
INSERT OR REPLACE INTO list_counts SELECT account_id, 'payments/receiving_counterparty_id=' || receiving_counterparty_id, count(*) FROM payments GROUP BY account_id, receiving_counterparty_id;
