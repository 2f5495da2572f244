DROP INDEX `counterparties_internal_id_idx`;--> statement-breakpoint
CREATE INDEX `counterparties_internal_id_list_idx` ON `counterparties` (`account_id`,`internal_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `counterparties_type_idx` ON `counterparties` (`account_id`,`type`,`created_at`,`id`);