import { integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";

/** The span of one bucket. */
export const BUCKET_MS = 5 * 60 * 1000;

/** The upper bound (ms) of each duration bin, h0 to h10; the last is the attempt timeout, and holds everything longer. */
export const DURATION_BINS_MS = [10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 15000] as const;

/**
 * Each subscription's attempts per 5-minute bucket, added to as attempts are recorded
 * (webhooks/delivery/stats.ts), so that its health over a window reads a bounded number of rows
 * whatever its history: how many attempts, by the state they left their delivery in, and how long
 * they took, as counts per duration bin (h0 to h10: DURATION_BINS_MS).
 */
export const webhookStats = sqliteTable(
  "webhook_stats",
  {
    subscriptionId: text("subscription_id").notNull(),
    bucketStart: integer("bucket_start").notNull(),
    attempts: integer("attempts").notNull(),
    succeeded: integer("succeeded").notNull(),
    failed: integer("failed").notNull(),
    pending: integer("pending").notNull(),
    h0: integer("h0").notNull().default(0),
    h1: integer("h1").notNull().default(0),
    h2: integer("h2").notNull().default(0),
    h3: integer("h3").notNull().default(0),
    h4: integer("h4").notNull().default(0),
    h5: integer("h5").notNull().default(0),
    h6: integer("h6").notNull().default(0),
    h7: integer("h7").notNull().default(0),
    h8: integer("h8").notNull().default(0),
    h9: integer("h9").notNull().default(0),
    h10: integer("h10").notNull().default(0),
    // The lags (ms from a change's commit to its delivery's first 2xx) of the deliveries that
    // succeeded in the bucket, as JSON {bin: count} over LAG_BIN_RATIO's bins (webhooks/subscriptions/lag.ts).
    lag: text("lag").notNull().default("{}"),
  },
  (t) => [primaryKey({ columns: [t.subscriptionId, t.bucketStart] })],
);
