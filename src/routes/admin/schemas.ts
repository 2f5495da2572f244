import { z } from "@hono/zod-openapi";
import { ROLES } from "../../db/schema";
import { toIso } from "../../lib/time";
import type { Account } from "../../services/accounts";
import type { ApiUser } from "../../services/api-users";

export const AccountInput = z.object({ name: z.string().trim().min(1).max(200) }).openapi("AccountInput");
export const AccountSchema = z
  .object({ id: z.string(), name: z.string(), created: z.string().datetime() })
  .openapi("Account");

export const ApiUserInput = z
  .object({
    username: z
      .string()
      .min(1, { abort: true })
      .min(3)
      .max(150)
      .regex(/^[A-Za-z0-9@.+\-_]+$/, { error: "Enter a valid username. This value may contain only letters, numbers, and @/./+/-/_ characters." }),
    role: z.enum(ROLES).default("client"),
  })
  .openapi("ApiUserInput");

export const ApiUserSchema = z
  .object({
    username: z.string(),
    role: z.enum(ROLES),
    account_id: z.string(),
    password: z.string().openapi({ description: "Shown only in this answer." }),
    created: z.string().datetime(),
  })
  .openapi("ApiUserWithPassword");

export const accountView = (account: Account) => ({ id: account.id, name: account.name, created: toIso(account.createdAt) });

export const apiUserView = (user: ApiUser, password: string) => ({
  username: user.username,
  role: user.role,
  account_id: user.accountId,
  password,
  created: toIso(user.createdAt),
});
