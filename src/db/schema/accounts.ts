import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

export const accounts = sqliteTable(
  "accounts",
  {
    id: text("id").primaryKey(),
    name: text("name").notNull(),
    createdAt: integer("created_at").notNull(),
    // Set by DELETE /admin/accounts/{id}/: the account answers 404 from then on, and the cron
    // removes its rows in bounded steps (services/erasure.ts), then this row.
    erasedAt: integer("erased_at"),
    // The shard (db/shards.ts) that holds every row of the account's own data.
    shard: text("shard").notNull(),
    // A move to another shard under way (services/moves/): where to, how far, since when; null otherwise.
    moveTo: text("move_to"),
    moveState: text("move_state", { enum: ["copying", "draining", "frozen", "leaving", "canceling"] }),
    moveStartedAt: integer("move_started_at"),
    moveCopiedRows: integer("move_copied_rows"),
    // Where the copy stands (JSON, services/moves/).
    moveProgress: text("move_progress"),
    // Until when one cron step holds the move: steps never overlap, whatever runs them.
    moveLeaseUntil: integer("move_lease_until"),
    // Whether its new subscriptions, and any whose URL changes, must prove their receiver wants
    // their deliveries before any goes out (docs/interface.md, "Endpoint ownership").
    verifyEndpoints: integer("verify_endpoints", { mode: "boolean" }).notNull().default(false),
  },
  (t) => [index("accounts_created_idx").on(t.createdAt, t.id), index("accounts_shard_idx").on(t.shard)],
);
