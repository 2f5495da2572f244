-- Renames: a delivery's lease (leased_until, lease_token and their index), a subscription's back-off
-- (backoff_until), and an invoice link's released_by. drizzle-kit wrote a rebuild of payment_invoices
-- for its primary key's renamed column; a RENAME COLUMN does it in place, keeping the table's
-- WITHOUT ROWID and its move triggers (SQLite rewrites their references to the column). The code
-- before this migration names the old columns: migrate and deploy together (docs/operations.md).
ALTER TABLE `webhook_deliveries` RENAME COLUMN "claimed_until" TO "leased_until";--> statement-breakpoint
ALTER TABLE `webhook_deliveries` RENAME COLUMN "claim_token" TO "lease_token";--> statement-breakpoint
ALTER TABLE `webhook_subscriptions` RENAME COLUMN "held_until" TO "backoff_until";--> statement-breakpoint
ALTER TABLE `payment_invoices` RENAME COLUMN "claim" TO "released_by";--> statement-breakpoint
DROP INDEX `webhook_deliveries_claimed_idx`;--> statement-breakpoint
CREATE INDEX `webhook_deliveries_leased_idx` ON `webhook_deliveries` (`subscription_id`,`leased_until`) WHERE leased_until is not null;
