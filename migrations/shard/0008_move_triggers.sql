-- The move triggers of the replay tables (src/services/moves/tables.ts; printed by tools/dev/move-triggers.mjs --print).
CREATE TRIGGER "move_webhook_replays_insert" AFTER INSERT ON "webhook_replays"
WHEN EXISTS (SELECT 1 FROM moves) BEGIN
  SELECT RAISE(ABORT, 'account is moving') FROM moves m WHERE m.account_id = NEW.account_id AND m.state in ('frozen', 'leaving');
  INSERT INTO move_log (account_id, tbl, key) SELECT m.account_id, 'webhook_replays', json_array(NEW."id") FROM moves m WHERE m.account_id = NEW.account_id AND m.state IN ('copying', 'draining');
END;
--> statement-breakpoint
CREATE TRIGGER "move_webhook_replays_update" AFTER UPDATE ON "webhook_replays"
WHEN EXISTS (SELECT 1 FROM moves) BEGIN
  SELECT RAISE(ABORT, 'account is moving') FROM moves m WHERE m.account_id = NEW.account_id AND m.state in ('frozen', 'leaving');
  INSERT INTO move_log (account_id, tbl, key) SELECT m.account_id, 'webhook_replays', json_array(NEW."id") FROM moves m WHERE m.account_id = NEW.account_id AND m.state IN ('copying', 'draining');
END;
--> statement-breakpoint
CREATE TRIGGER "move_webhook_replays_delete" AFTER DELETE ON "webhook_replays"
WHEN EXISTS (SELECT 1 FROM moves) BEGIN
  SELECT RAISE(ABORT, 'account is moving') FROM moves m WHERE m.account_id = OLD.account_id AND m.state = 'frozen';
  INSERT INTO move_log (account_id, tbl, key) SELECT m.account_id, 'webhook_replays', json_array(OLD."id") FROM moves m WHERE m.account_id = OLD.account_id AND m.state IN ('copying', 'draining');
END;
--> statement-breakpoint
CREATE TRIGGER "move_webhook_replay_items_insert" AFTER INSERT ON "webhook_replay_items"
WHEN EXISTS (SELECT 1 FROM moves) BEGIN
  SELECT RAISE(ABORT, 'account is moving') FROM moves m WHERE m.account_id = (select x.account_id from webhook_replays x where x.id = NEW.replay_id) AND m.state in ('frozen', 'leaving');
  INSERT INTO move_log (account_id, tbl, key) SELECT m.account_id, 'webhook_replay_items', json_array(NEW."replay_id", NEW."sequence") FROM moves m WHERE m.account_id = (select x.account_id from webhook_replays x where x.id = NEW.replay_id) AND m.state IN ('copying', 'draining');
END;
--> statement-breakpoint
CREATE TRIGGER "move_webhook_replay_items_update" AFTER UPDATE ON "webhook_replay_items"
WHEN EXISTS (SELECT 1 FROM moves) BEGIN
  SELECT RAISE(ABORT, 'account is moving') FROM moves m WHERE m.account_id = (select x.account_id from webhook_replays x where x.id = NEW.replay_id) AND m.state in ('frozen', 'leaving');
  INSERT INTO move_log (account_id, tbl, key) SELECT m.account_id, 'webhook_replay_items', json_array(NEW."replay_id", NEW."sequence") FROM moves m WHERE m.account_id = (select x.account_id from webhook_replays x where x.id = NEW.replay_id) AND m.state IN ('copying', 'draining');
END;
--> statement-breakpoint
CREATE TRIGGER "move_webhook_replay_items_delete" AFTER DELETE ON "webhook_replay_items"
WHEN EXISTS (SELECT 1 FROM moves) BEGIN
  SELECT RAISE(ABORT, 'account is moving') FROM moves m WHERE m.account_id = (select x.account_id from webhook_replays x where x.id = OLD.replay_id) AND m.state = 'frozen';
  INSERT INTO move_log (account_id, tbl, key) SELECT m.account_id, 'webhook_replay_items', json_array(OLD."replay_id", OLD."sequence") FROM moves m WHERE m.account_id = (select x.account_id from webhook_replays x where x.id = OLD.replay_id) AND m.state IN ('copying', 'draining');
END;
