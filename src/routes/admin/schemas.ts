import { z } from "@hono/zod-openapi";
import { ROLES } from "../../db/schema";
import { toIso } from "../../lib/time";
import { timestamp } from "../common";
import type { Account } from "../../services/accounts";
import type { ApiUser } from "../../services/api-users";

const accountName = z.string().trim().min(1).max(200).openapi({ description: "The account's name.", example: "Demo Payables Inc." });
const shardName = z.string().openapi({ description: "The shard that holds the account's data (a `SHARD_<name>` D1 binding).", example: "A" });
export const AccountInput = z.object({
  name: accountName,
  shard: shardName.min(1).max(100).optional().openapi({ description: "The shard to place the account on; by default the open shard with the fewest bytes." }),
});
export const AccountSchema = z
  .object({
    id: z.string().openapi({ description: "The account's id.", example: "acct_demoAccount000000001" }),
    name: accountName,
    shard: shardName,
    created: timestamp("When it was created."),
    move: z
      .object({
        to: z.string().openapi({ description: "The shard it is moving to.", example: "B" }),
        state: z.enum(["copying", "draining", "frozen", "leaving", "canceling"]).openapi({
          description:
            "`copying` (its rows are copied while it works), `draining` (its attempts in flight end), `frozen` (the seconds of the cut-over: its writes answer 503), `leaving` (it works from the new shard; the old one loses its rows), `canceling` (the move was canceled: the copy on the target is removed; the account works on its own shard throughout).",
        }),
        copied_rows: z.int().openapi({ description: "Rows copied so far (a row changed during the copy counts again).", example: 12000 }),
        started: timestamp("When the move started."),
      })
      .nullable()
      .openapi({ description: "The move to another shard under way; null when none is." }),
    verify_endpoints: z.boolean().openapi({
      description:
        "Whether its new subscriptions, and any whose `url` changes, must prove their receiver wants their deliveries (a signed challenge echoed back) before any goes out. Off by default.",
      example: false,
    }),
  })
  .openapi("Account");
export const AccountUpdate = z
  .object({
    verify_endpoints: z.boolean().optional().openapi({ description: "Require proof of endpoint ownership for the account's subscriptions from now on." }),
  })
  .openapi("AccountUpdate");
export const MoveInput = z.object({ shard: shardName.min(1).max(100).openapi({ description: "The shard to move the account to." }) });

export const ShardSchema = z
  .object({
    name: z.string().openapi({ description: "The shard's name: its binding is `SHARD_<name>`.", example: "A" }),
    accounts: z.int().openapi({ description: "Accounts placed on it.", example: 12 }),
    bytes: z
      .int()
      .nullable()
      .openapi({ description: "The database's size as D1 reports it; null when the Worker's configuration lacks the binding.", example: 1048576 }),
    open: z.boolean().openapi({ description: "Whether new accounts may be placed on it.", example: true }),
  })
  .openapi("Shard");
export const ShardInput = z.object({ open: z.boolean().openapi({ description: "false closes the shard to new accounts; its accounts keep working." }) });

const role = z.enum(ROLES).openapi({ description: "`client`, or `processor`, which may also record payment events.", example: "client" });

export const ApiUserInput = z.object({
  username: z
    .string()
    .min(1, { abort: true })
    .min(3)
    .max(150)
    .regex(/^[A-Za-z0-9@.+\-_]+$/, { error: "Enter a valid username. This value may contain only letters, numbers, and @/./+/-/_ characters." })
    .openapi({ description: "Unique across the service: 3 to 150 letters, digits and `@.+-_`.", example: "acme-erp" }),
  role: role.default("client"),
});

export const ApiUserSchema = z
  .object({
    username: z.string().openapi({ description: "The username, for HTTP Basic.", example: "acme-erp" }),
    role,
    account_id: z.string().openapi({ description: "The user's account.", example: "acct_demoAccount000000001" }),
    password: z.string().openapi({
      description: "The generated password (32 random bytes, URL-safe); shown only in this answer.",
      example: "q0Zk3v9yTn1bW8xR5cL2mP7sD4fG6hJ0aE3uI9oY1tA",
    }),
    created: timestamp("When the user was made."),
  })
  .openapi("ApiUserWithPassword");

export const accountView = (account: Account) => ({
  id: account.id,
  name: account.name,
  shard: account.shard,
  created: toIso(account.createdAt),
  move: account.moveState
    ? { to: account.moveTo!, state: account.moveState, copied_rows: account.moveCopiedRows ?? 0, started: toIso(account.moveStartedAt!) }
    : null,
  verify_endpoints: account.verifyEndpoints,
});

export const apiUserView = (user: ApiUser, password: string) => ({
  username: user.username,
  role: user.role,
  account_id: user.accountId,
  password,
  created: toIso(user.createdAt),
});
