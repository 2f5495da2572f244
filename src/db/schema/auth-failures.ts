import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

/**
 * Failed sign-ins counted per key (a username, a client address, the admin API) in fixed
 * one-minute windows, so that guessing is throttled across every isolate (services/auth-throttle.ts).
 */
export const authFailures = sqliteTable(
  "auth_failures",
  {
    key: text("key").primaryKey(),
    windowStart: integer("window_start").notNull(),
    failures: integer("failures").notNull(),
  },
  (t) => [index("auth_failures_window_idx").on(t.windowStart)],
);
