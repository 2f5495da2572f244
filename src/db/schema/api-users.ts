import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { accounts } from "./accounts";

export const ROLES = ["client", "processor"] as const;
export type Role = (typeof ROLES)[number];

export const apiUsers = sqliteTable(
  "api_users",
  {
    // Usernames are unique across the service; Basic auth looks users up by it.
    username: text("username").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id),
    role: text("role", { enum: ROLES }).notNull(),
    // SHA-256 of the generated password: enough for a 256-bit random secret.
    passwordHash: text("password_hash").notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [index("api_users_account_idx").on(t.accountId)],
);
