import { integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

/**
 * How far a shard's sweeper has looked, by name: `fresh` is the `created` up to which every
 * delivery handed over at its creation has been checked for a lost message (webhooks/upkeep/fresh.ts).
 */
export const sweepMarks = sqliteTable("sweep_marks", {
  name: text("name").primaryKey(),
  at: integer("at").notNull(),
});
