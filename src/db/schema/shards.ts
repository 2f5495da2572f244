import { integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

/**
 * The shards the directory knows: one per `SHARD_<name>` D1 binding (db/shards.ts), recorded the
 * first time the service sees it. A closed shard takes no new accounts; its accounts keep working.
 */
export const shards = sqliteTable("shards", {
  name: text("name").primaryKey(),
  open: integer("open", { mode: "boolean" }).notNull().default(true),
  createdAt: integer("created_at").notNull(),
});
