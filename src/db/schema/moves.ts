import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

export const MOVE_STATES = ["copying", "draining", "frozen", "leaving", "arriving"] as const;
export type MoveState = (typeof MOVE_STATES)[number];

/**
 * An account leaving this shard (services/moves/). While it has a row here, triggers on every
 * tenant table (migrations/shard/0001_move_triggers.sql) act on the account's rows: `copying` and
 * `draining` log each change in move_log; `frozen` refuses every change; `leaving` refuses all but
 * deletes. On the shard it is moving to, `arriving` marks the copy: until the cut-over, no lease,
 * sweep or retention there touches its rows. Past `copying` an account's deliveries are not
 * leased (db/moving.ts). With the table empty the triggers write nothing (D1 counts one more row
 * read per row written: their check of it).
 */
export const moves = sqliteTable("moves", {
  accountId: text("account_id").primaryKey(),
  state: text("state", { enum: MOVE_STATES }).notNull(),
  startedAt: integer("started_at").notNull(),
});

/** What changed in a moving account's rows since its copy began: a table and a row's primary key (JSON array), in commit order. */
export const moveLog = sqliteTable(
  "move_log",
  {
    seq: integer("seq").primaryKey({ autoIncrement: true }),
    accountId: text("account_id").notNull(),
    table: text("tbl").notNull(),
    key: text("key").notNull(),
  },
  (t) => [index("move_log_account_idx").on(t.accountId, t.seq)],
);
