import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";

/**
 * Idempotency keys (docs/interface.md, "Safe retries"), per API user: the request a key was first
 * used with (its hash), the request that holds it while it runs (`token`, until `lockedUntil`),
 * and once answered the answer's status and body. A write's answer is stored by a statement of the
 * write's own batch (idempotency/store.ts), so a key and its effect never disagree. Kept 24 hours.
 */
export const idempotencyKeys = sqliteTable(
  "idempotency_keys",
  {
    accountId: text("account_id").notNull(),
    username: text("username").notNull(),
    key: text("key").notNull(),
    requestHash: text("request_hash").notNull(),
    /** The running request's claim; a batch that stores an answer fails if it is no longer its own. */
    token: text("token").notNull(),
    lockedUntil: integer("locked_until").notNull(),
    /** Null while the first request runs. */
    status: integer("status"),
    /** The answer's JSON; sealed with ENCRYPTION_KEY when it holds secrets (`sealed` = 1). */
    body: text("body"),
    sealed: integer("sealed").notNull().default(0),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.username, t.key] }), index("idempotency_keys_created").on(t.createdAt)],
);
