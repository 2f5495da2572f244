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
  },
  (t) => [index("accounts_created_idx").on(t.createdAt, t.id), index("accounts_shard_idx").on(t.shard)],
);
