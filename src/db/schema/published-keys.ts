import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { accounts } from "./accounts";

/**
 * Where an `ed25519` subscription's public keys are read without credentials (its JWK Set,
 * docs/interface.md "Key discovery"): the subscription's account, so its shard. The keys
 * themselves stay on the subscription's row; this says only where it is.
 */
export const publishedKeys = sqliteTable(
  "published_keys",
  {
    subscriptionId: text("subscription_id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [index("published_keys_account_idx").on(t.accountId)],
);
