-- The move triggers (src/services/moves/tables.ts; written by tools/dev/move-triggers.mjs).
CREATE TRIGGER "move_tenants_insert" AFTER INSERT ON "tenants"
WHEN EXISTS (SELECT 1 FROM moves) BEGIN
  SELECT RAISE(ABORT, 'account is moving') FROM moves m WHERE m.account_id = NEW.id AND m.state in ('frozen', 'leaving');
  INSERT INTO move_log (account_id, tbl, key) SELECT m.account_id, 'tenants', json_array(NEW."id") FROM moves m WHERE m.account_id = NEW.id AND m.state IN ('copying', 'draining');
END;
--> statement-breakpoint
CREATE TRIGGER "move_tenants_update" AFTER UPDATE ON "tenants"
WHEN EXISTS (SELECT 1 FROM moves) BEGIN
  SELECT RAISE(ABORT, 'account is moving') FROM moves m WHERE m.account_id = NEW.id AND m.state in ('frozen', 'leaving');
  INSERT INTO move_log (account_id, tbl, key) SELECT m.account_id, 'tenants', json_array(NEW."id") FROM moves m WHERE m.account_id = NEW.id AND m.state IN ('copying', 'draining');
END;
--> statement-breakpoint
CREATE TRIGGER "move_tenants_delete" AFTER DELETE ON "tenants"
WHEN EXISTS (SELECT 1 FROM moves) BEGIN
  SELECT RAISE(ABORT, 'account is moving') FROM moves m WHERE m.account_id = OLD.id AND m.state = 'frozen';
  INSERT INTO move_log (account_id, tbl, key) SELECT m.account_id, 'tenants', json_array(OLD."id") FROM moves m WHERE m.account_id = OLD.id AND m.state IN ('copying', 'draining');
END;
--> statement-breakpoint
CREATE TRIGGER "move_counterparties_insert" AFTER INSERT ON "counterparties"
WHEN EXISTS (SELECT 1 FROM moves) BEGIN
  SELECT RAISE(ABORT, 'account is moving') FROM moves m WHERE m.account_id = NEW.account_id AND m.state in ('frozen', 'leaving');
  INSERT INTO move_log (account_id, tbl, key) SELECT m.account_id, 'counterparties', json_array(NEW."id") FROM moves m WHERE m.account_id = NEW.account_id AND m.state IN ('copying', 'draining');
END;
--> statement-breakpoint
CREATE TRIGGER "move_counterparties_update" AFTER UPDATE ON "counterparties"
WHEN EXISTS (SELECT 1 FROM moves) BEGIN
  SELECT RAISE(ABORT, 'account is moving') FROM moves m WHERE m.account_id = NEW.account_id AND m.state in ('frozen', 'leaving');
  INSERT INTO move_log (account_id, tbl, key) SELECT m.account_id, 'counterparties', json_array(NEW."id") FROM moves m WHERE m.account_id = NEW.account_id AND m.state IN ('copying', 'draining');
END;
--> statement-breakpoint
CREATE TRIGGER "move_counterparties_delete" AFTER DELETE ON "counterparties"
WHEN EXISTS (SELECT 1 FROM moves) BEGIN
  SELECT RAISE(ABORT, 'account is moving') FROM moves m WHERE m.account_id = OLD.account_id AND m.state = 'frozen';
  INSERT INTO move_log (account_id, tbl, key) SELECT m.account_id, 'counterparties', json_array(OLD."id") FROM moves m WHERE m.account_id = OLD.account_id AND m.state IN ('copying', 'draining');
END;
--> statement-breakpoint
CREATE TRIGGER "move_invoices_insert" AFTER INSERT ON "invoices"
WHEN EXISTS (SELECT 1 FROM moves) BEGIN
  SELECT RAISE(ABORT, 'account is moving') FROM moves m WHERE m.account_id = NEW.account_id AND m.state in ('frozen', 'leaving');
  INSERT INTO move_log (account_id, tbl, key) SELECT m.account_id, 'invoices', json_array(NEW."id") FROM moves m WHERE m.account_id = NEW.account_id AND m.state IN ('copying', 'draining');
END;
--> statement-breakpoint
CREATE TRIGGER "move_invoices_update" AFTER UPDATE ON "invoices"
WHEN EXISTS (SELECT 1 FROM moves) BEGIN
  SELECT RAISE(ABORT, 'account is moving') FROM moves m WHERE m.account_id = NEW.account_id AND m.state in ('frozen', 'leaving');
  INSERT INTO move_log (account_id, tbl, key) SELECT m.account_id, 'invoices', json_array(NEW."id") FROM moves m WHERE m.account_id = NEW.account_id AND m.state IN ('copying', 'draining');
END;
--> statement-breakpoint
CREATE TRIGGER "move_invoices_delete" AFTER DELETE ON "invoices"
WHEN EXISTS (SELECT 1 FROM moves) BEGIN
  SELECT RAISE(ABORT, 'account is moving') FROM moves m WHERE m.account_id = OLD.account_id AND m.state = 'frozen';
  INSERT INTO move_log (account_id, tbl, key) SELECT m.account_id, 'invoices', json_array(OLD."id") FROM moves m WHERE m.account_id = OLD.account_id AND m.state IN ('copying', 'draining');
END;
--> statement-breakpoint
CREATE TRIGGER "move_payments_insert" AFTER INSERT ON "payments"
WHEN EXISTS (SELECT 1 FROM moves) BEGIN
  SELECT RAISE(ABORT, 'account is moving') FROM moves m WHERE m.account_id = NEW.account_id AND m.state in ('frozen', 'leaving');
  INSERT INTO move_log (account_id, tbl, key) SELECT m.account_id, 'payments', json_array(NEW."id") FROM moves m WHERE m.account_id = NEW.account_id AND m.state IN ('copying', 'draining');
END;
--> statement-breakpoint
CREATE TRIGGER "move_payments_update" AFTER UPDATE ON "payments"
WHEN EXISTS (SELECT 1 FROM moves) BEGIN
  SELECT RAISE(ABORT, 'account is moving') FROM moves m WHERE m.account_id = NEW.account_id AND m.state in ('frozen', 'leaving');
  INSERT INTO move_log (account_id, tbl, key) SELECT m.account_id, 'payments', json_array(NEW."id") FROM moves m WHERE m.account_id = NEW.account_id AND m.state IN ('copying', 'draining');
END;
--> statement-breakpoint
CREATE TRIGGER "move_payments_delete" AFTER DELETE ON "payments"
WHEN EXISTS (SELECT 1 FROM moves) BEGIN
  SELECT RAISE(ABORT, 'account is moving') FROM moves m WHERE m.account_id = OLD.account_id AND m.state = 'frozen';
  INSERT INTO move_log (account_id, tbl, key) SELECT m.account_id, 'payments', json_array(OLD."id") FROM moves m WHERE m.account_id = OLD.account_id AND m.state IN ('copying', 'draining');
END;
--> statement-breakpoint
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
CREATE TRIGGER "move_payment_events_insert" AFTER INSERT ON "payment_events"
WHEN EXISTS (SELECT 1 FROM moves) BEGIN
  SELECT RAISE(ABORT, 'account is moving') FROM moves m WHERE m.account_id = (select x.account_id from payments x where x.id = NEW.payment_id) AND m.state in ('frozen', 'leaving');
  INSERT INTO move_log (account_id, tbl, key) SELECT m.account_id, 'payment_events', json_array(NEW."payment_id", NEW."seq") FROM moves m WHERE m.account_id = (select x.account_id from payments x where x.id = NEW.payment_id) AND m.state IN ('copying', 'draining');
END;
--> statement-breakpoint
CREATE TRIGGER "move_payment_events_update" AFTER UPDATE ON "payment_events"
WHEN EXISTS (SELECT 1 FROM moves) BEGIN
  SELECT RAISE(ABORT, 'account is moving') FROM moves m WHERE m.account_id = (select x.account_id from payments x where x.id = NEW.payment_id) AND m.state in ('frozen', 'leaving');
  INSERT INTO move_log (account_id, tbl, key) SELECT m.account_id, 'payment_events', json_array(NEW."payment_id", NEW."seq") FROM moves m WHERE m.account_id = (select x.account_id from payments x where x.id = NEW.payment_id) AND m.state IN ('copying', 'draining');
END;
--> statement-breakpoint
CREATE TRIGGER "move_payment_events_delete" AFTER DELETE ON "payment_events"
WHEN EXISTS (SELECT 1 FROM moves) BEGIN
  SELECT RAISE(ABORT, 'account is moving') FROM moves m WHERE m.account_id = (select x.account_id from payments x where x.id = OLD.payment_id) AND m.state = 'frozen';
  INSERT INTO move_log (account_id, tbl, key) SELECT m.account_id, 'payment_events', json_array(OLD."payment_id", OLD."seq") FROM moves m WHERE m.account_id = (select x.account_id from payments x where x.id = OLD.payment_id) AND m.state IN ('copying', 'draining');
END;
--> statement-breakpoint
CREATE TRIGGER "move_webhook_subscriptions_insert" AFTER INSERT ON "webhook_subscriptions"
WHEN EXISTS (SELECT 1 FROM moves) BEGIN
  SELECT RAISE(ABORT, 'account is moving') FROM moves m WHERE m.account_id = NEW.account_id AND m.state in ('frozen', 'leaving');
  INSERT INTO move_log (account_id, tbl, key) SELECT m.account_id, 'webhook_subscriptions', json_array(NEW."id") FROM moves m WHERE m.account_id = NEW.account_id AND m.state IN ('copying', 'draining');
END;
--> statement-breakpoint
CREATE TRIGGER "move_webhook_subscriptions_update" AFTER UPDATE ON "webhook_subscriptions"
WHEN EXISTS (SELECT 1 FROM moves) BEGIN
  SELECT RAISE(ABORT, 'account is moving') FROM moves m WHERE m.account_id = NEW.account_id AND m.state in ('frozen', 'leaving');
  INSERT INTO move_log (account_id, tbl, key) SELECT m.account_id, 'webhook_subscriptions', json_array(NEW."id") FROM moves m WHERE m.account_id = NEW.account_id AND m.state IN ('copying', 'draining');
END;
--> statement-breakpoint
CREATE TRIGGER "move_webhook_subscriptions_delete" AFTER DELETE ON "webhook_subscriptions"
WHEN EXISTS (SELECT 1 FROM moves) BEGIN
  SELECT RAISE(ABORT, 'account is moving') FROM moves m WHERE m.account_id = OLD.account_id AND m.state = 'frozen';
  INSERT INTO move_log (account_id, tbl, key) SELECT m.account_id, 'webhook_subscriptions', json_array(OLD."id") FROM moves m WHERE m.account_id = OLD.account_id AND m.state IN ('copying', 'draining');
END;
--> statement-breakpoint
CREATE TRIGGER "move_webhook_deliveries_insert" AFTER INSERT ON "webhook_deliveries"
WHEN EXISTS (SELECT 1 FROM moves) BEGIN
  SELECT RAISE(ABORT, 'account is moving') FROM moves m WHERE m.account_id = NEW.account_id AND m.state in ('frozen', 'leaving');
  INSERT INTO move_log (account_id, tbl, key) SELECT m.account_id, 'webhook_deliveries', json_array(NEW."id") FROM moves m WHERE m.account_id = NEW.account_id AND m.state IN ('copying', 'draining');
END;
--> statement-breakpoint
CREATE TRIGGER "move_webhook_deliveries_update" AFTER UPDATE ON "webhook_deliveries"
WHEN EXISTS (SELECT 1 FROM moves) BEGIN
  SELECT RAISE(ABORT, 'account is moving') FROM moves m WHERE m.account_id = NEW.account_id AND m.state in ('frozen', 'leaving');
  INSERT INTO move_log (account_id, tbl, key) SELECT m.account_id, 'webhook_deliveries', json_array(NEW."id") FROM moves m WHERE m.account_id = NEW.account_id AND m.state IN ('copying', 'draining');
END;
--> statement-breakpoint
CREATE TRIGGER "move_webhook_deliveries_delete" AFTER DELETE ON "webhook_deliveries"
WHEN EXISTS (SELECT 1 FROM moves) BEGIN
  SELECT RAISE(ABORT, 'account is moving') FROM moves m WHERE m.account_id = OLD.account_id AND m.state = 'frozen';
  INSERT INTO move_log (account_id, tbl, key) SELECT m.account_id, 'webhook_deliveries', json_array(OLD."id") FROM moves m WHERE m.account_id = OLD.account_id AND m.state IN ('copying', 'draining');
END;
--> statement-breakpoint
CREATE TRIGGER "move_webhook_attempts_insert" AFTER INSERT ON "webhook_attempts"
WHEN EXISTS (SELECT 1 FROM moves) BEGIN
  SELECT RAISE(ABORT, 'account is moving') FROM moves m WHERE m.account_id = (select x.account_id from webhook_deliveries x where x.id = NEW.delivery_id) AND m.state in ('frozen', 'leaving');
  INSERT INTO move_log (account_id, tbl, key) SELECT m.account_id, 'webhook_attempts', json_array(NEW."delivery_id", NEW."number") FROM moves m WHERE m.account_id = (select x.account_id from webhook_deliveries x where x.id = NEW.delivery_id) AND m.state IN ('copying', 'draining');
END;
--> statement-breakpoint
CREATE TRIGGER "move_webhook_attempts_update" AFTER UPDATE ON "webhook_attempts"
WHEN EXISTS (SELECT 1 FROM moves) BEGIN
  SELECT RAISE(ABORT, 'account is moving') FROM moves m WHERE m.account_id = (select x.account_id from webhook_deliveries x where x.id = NEW.delivery_id) AND m.state in ('frozen', 'leaving');
  INSERT INTO move_log (account_id, tbl, key) SELECT m.account_id, 'webhook_attempts', json_array(NEW."delivery_id", NEW."number") FROM moves m WHERE m.account_id = (select x.account_id from webhook_deliveries x where x.id = NEW.delivery_id) AND m.state IN ('copying', 'draining');
END;
--> statement-breakpoint
CREATE TRIGGER "move_webhook_attempts_delete" AFTER DELETE ON "webhook_attempts"
WHEN EXISTS (SELECT 1 FROM moves) BEGIN
  SELECT RAISE(ABORT, 'account is moving') FROM moves m WHERE m.account_id = (select x.account_id from webhook_deliveries x where x.id = OLD.delivery_id) AND m.state = 'frozen';
  INSERT INTO move_log (account_id, tbl, key) SELECT m.account_id, 'webhook_attempts', json_array(OLD."delivery_id", OLD."number") FROM moves m WHERE m.account_id = (select x.account_id from webhook_deliveries x where x.id = OLD.delivery_id) AND m.state IN ('copying', 'draining');
END;
--> statement-breakpoint
CREATE TRIGGER "move_webhook_stats_insert" AFTER INSERT ON "webhook_stats"
WHEN EXISTS (SELECT 1 FROM moves) BEGIN
  SELECT RAISE(ABORT, 'account is moving') FROM moves m WHERE m.account_id = (select x.account_id from webhook_subscriptions x where x.id = NEW.subscription_id) AND m.state in ('frozen', 'leaving');
  INSERT INTO move_log (account_id, tbl, key) SELECT m.account_id, 'webhook_stats', json_array(NEW."subscription_id", NEW."bucket_start") FROM moves m WHERE m.account_id = (select x.account_id from webhook_subscriptions x where x.id = NEW.subscription_id) AND m.state IN ('copying', 'draining');
END;
--> statement-breakpoint
CREATE TRIGGER "move_webhook_stats_update" AFTER UPDATE ON "webhook_stats"
WHEN EXISTS (SELECT 1 FROM moves) BEGIN
  SELECT RAISE(ABORT, 'account is moving') FROM moves m WHERE m.account_id = (select x.account_id from webhook_subscriptions x where x.id = NEW.subscription_id) AND m.state in ('frozen', 'leaving');
  INSERT INTO move_log (account_id, tbl, key) SELECT m.account_id, 'webhook_stats', json_array(NEW."subscription_id", NEW."bucket_start") FROM moves m WHERE m.account_id = (select x.account_id from webhook_subscriptions x where x.id = NEW.subscription_id) AND m.state IN ('copying', 'draining');
END;
--> statement-breakpoint
CREATE TRIGGER "move_webhook_stats_delete" AFTER DELETE ON "webhook_stats"
WHEN EXISTS (SELECT 1 FROM moves) BEGIN
  SELECT RAISE(ABORT, 'account is moving') FROM moves m WHERE m.account_id = (select x.account_id from webhook_subscriptions x where x.id = OLD.subscription_id) AND m.state = 'frozen';
  INSERT INTO move_log (account_id, tbl, key) SELECT m.account_id, 'webhook_stats', json_array(OLD."subscription_id", OLD."bucket_start") FROM moves m WHERE m.account_id = (select x.account_id from webhook_subscriptions x where x.id = OLD.subscription_id) AND m.state IN ('copying', 'draining');
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
--> statement-breakpoint
CREATE TRIGGER "move_idempotency_keys_insert" AFTER INSERT ON "idempotency_keys"
WHEN EXISTS (SELECT 1 FROM moves) BEGIN
  SELECT RAISE(ABORT, 'account is moving') FROM moves m WHERE m.account_id = NEW.account_id AND m.state in ('frozen', 'leaving');
  INSERT INTO move_log (account_id, tbl, key) SELECT m.account_id, 'idempotency_keys', json_array(NEW."account_id", NEW."username", NEW."key") FROM moves m WHERE m.account_id = NEW.account_id AND m.state IN ('copying', 'draining');
END;
--> statement-breakpoint
CREATE TRIGGER "move_idempotency_keys_update" AFTER UPDATE ON "idempotency_keys"
WHEN EXISTS (SELECT 1 FROM moves) BEGIN
  SELECT RAISE(ABORT, 'account is moving') FROM moves m WHERE m.account_id = NEW.account_id AND m.state in ('frozen', 'leaving');
  INSERT INTO move_log (account_id, tbl, key) SELECT m.account_id, 'idempotency_keys', json_array(NEW."account_id", NEW."username", NEW."key") FROM moves m WHERE m.account_id = NEW.account_id AND m.state IN ('copying', 'draining');
END;
--> statement-breakpoint
CREATE TRIGGER "move_idempotency_keys_delete" AFTER DELETE ON "idempotency_keys"
WHEN EXISTS (SELECT 1 FROM moves) BEGIN
  SELECT RAISE(ABORT, 'account is moving') FROM moves m WHERE m.account_id = OLD.account_id AND m.state = 'frozen';
  INSERT INTO move_log (account_id, tbl, key) SELECT m.account_id, 'idempotency_keys', json_array(OLD."account_id", OLD."username", OLD."key") FROM moves m WHERE m.account_id = OLD.account_id AND m.state IN ('copying', 'draining');
END;
