import { integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

/**
 * An account's row in the shard that holds its data: what every tenant table of the shard refers
 * to. The account itself (name, API users, which shard) lives in the directory (accounts.ts).
 */
export const tenants = sqliteTable("tenants", {
  id: text("id").primaryKey(),
  createdAt: integer("created_at").notNull(),
  // The feed's epoch on this shard (webhooks/subscriptions/feed.ts): new when a move brings the account here;
  // null until then (its created_at stands for it).
  epoch: text("epoch"),
});
