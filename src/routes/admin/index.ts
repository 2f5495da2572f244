import { createRoute, z } from "@hono/zod-openapi";
import { createAccount, getAccount, listAccounts, updateAccount } from "../../services/accounts";
import { cancelMove, startMove } from "../../services/moves";
import { listShards, setShardOpen, walkShards } from "../../services/shards";
import { eraseAccount } from "../../services/erasure";
import { createApiUser, deleteApiUser, rotateApiUserPassword } from "../../services/api-users";
import { BODY_ERRORS, createRouter, envelope, errorsOf, INVALID_PAGE, jsonBody, jsonResponse, listEnvelope, pageRequest, type ErrorStatus } from "../common";
import { pagingParams } from "../../lib/filters";
import { resealSubscriptions } from "../../webhooks";
import {
  AccountInput,
  AccountSchema,
  AccountUpdate,
  accountView,
  ApiUserInput,
  ApiUserSchema,
  apiUserView,
  MoveInput,
  ShardInput,
  ShardSchema,
} from "./schemas";

const security = [{ adminToken: [] }];
const tags = ["admin"];
const ADMIN_DESCRIPTIONS = {
  401: "Missing or wrong admin token (with a `WWW-Authenticate: Bearer` challenge)",
  403: "The admin API is disabled: ADMIN_TOKEN is not set",
  404: "No such account or user",
};
// Operators are not rate limited.
const adminErrors = (statuses: ErrorStatus[]) => errorsOf([401, 403, ...statuses], ADMIN_DESCRIPTIONS, { throttled: false });
const AccountParam = z.object({
  account_id: z
    .string()
    .openapi({ param: { name: "account_id", in: "path", description: "The account's id (`acct_…`)." }, example: "acct_demoAccount000000001" }),
});
const UserParams = AccountParam.extend({
  username: z.string().openapi({ param: { name: "username", in: "path", description: "The API user's username." }, example: "demo-client" }),
});

/** The admin API; `adminAuth` guards it in app.ts, before any body is read. */
export const admin = createRouter();

admin.openapi(
  createRoute({
    method: "post",
    path: "/accounts",
    operationId: "createAccount",
    summary: "Create an account",
    description:
      "Operators only (`Authorization: Bearer <ADMIN_TOKEN>`). An account is a tenant. Its data lives on one shard: the one named in `shard`, else the open shard with the fewest bytes.",
    tags,
    security,
    request: { body: jsonBody(AccountInput) },
    responses: {
      201: jsonResponse(AccountSchema, "The new account"),
      ...errorsOf(
        [401, 403, ...BODY_ERRORS, 409],
        { ...ADMIN_DESCRIPTIONS, 400: "Invalid input, or a `shard` that is not configured or is closed", 409: "No shard is open to new accounts" },
        { throttled: false },
      ),
    },
  }),
  async (c) => {
    const { name, shard } = c.req.valid("json");
    return c.json(accountView(await createAccount(c.get("directory"), c.env, name, shard)), 201);
  },
);

admin.openapi(
  createRoute({
    method: "get",
    path: "/accounts",
    operationId: "listAccounts",
    summary: "List accounts",
    tags,
    security,
    request: { query: z.object(pagingParams("accounts")) },
    responses: {
      200: jsonResponse(listEnvelope(AccountSchema, "AccountList"), "Every account"),
      ...errorsOf([401, 403, 404], { ...ADMIN_DESCRIPTIONS, ...INVALID_PAGE }, { throttled: false }),
    },
  }),
  async (c) => {
    const page = await listAccounts(c.get("directory"), pageRequest(c, "accounts"));
    return c.json(envelope(c, page, page.rows.map(accountView)), 200);
  },
);

admin.openapi(
  createRoute({
    method: "get",
    path: "/accounts/{account_id}",
    operationId: "getAccount",
    summary: "Get an account",
    description: "Its shard, and the move under way if there is one.",
    tags,
    security,
    request: { params: AccountParam },
    responses: { 200: jsonResponse(AccountSchema, "The account"), ...adminErrors([404]) },
  }),
  async (c) => c.json(accountView(await getAccount(c.get("directory"), c.req.valid("param").account_id)), 200),
);

admin.openapi(
  createRoute({
    method: "patch",
    path: "/accounts/{account_id}",
    operationId: "updateAccount",
    summary: "Change an account's settings",
    description:
      "`verify_endpoints: true` makes each new subscription of the account, and each whose `url` changes, prove that its receiver wants its deliveries before any goes out (docs: endpoint ownership).",
    tags,
    security,
    request: { params: AccountParam, body: jsonBody(AccountUpdate) },
    responses: { 200: jsonResponse(AccountSchema, "The account"), ...adminErrors([...BODY_ERRORS, 404]) },
  }),
  async (c) => {
    const input = c.req.valid("json");
    return c.json(accountView(await updateAccount(c.get("directory"), c.req.valid("param").account_id, { verifyEndpoints: input.verify_endpoints })), 200);
  },
);

admin.openapi(
  createRoute({
    method: "post",
    path: "/accounts/{account_id}/move",
    operationId: "moveAccount",
    summary: "Move an account to another shard",
    description:
      "Answers 202; the cron copies the account's rows in bounded steps while it keeps working, then cuts over: for a few seconds its writes answer 503 `Account is moving; retry shortly.` with `Retry-After` (reads never fail), then it works from the new shard, and the old one loses its rows. Every row, stamp, delivery (pending ones go on from the new shard, none sent twice) and idempotency key is kept. `move` on the account shows how far it is.",
    tags,
    security,
    request: { params: AccountParam, body: jsonBody(MoveInput) },
    responses: {
      202: jsonResponse(AccountSchema, "The account, its move started"),
      ...errorsOf(
        [401, 403, ...BODY_ERRORS, 404, 409],
        {
          ...ADMIN_DESCRIPTIONS,
          400: "Invalid input: a shard that is not configured, is closed, or is the account's own; or the account's own shard is not configured",
          409: "The account is already moving",
        },
        { throttled: false },
      ),
    },
  }),
  async (c) => c.json(accountView(await startMove(c.get("directory"), c.env, c.req.valid("param").account_id, c.req.valid("json").shard)), 202),
);

admin.openapi(
  createRoute({
    method: "delete",
    path: "/accounts/{account_id}/move",
    operationId: "cancelAccountMove",
    summary: "Cancel an account's move before its cut-over",
    description:
      "For a move that cannot progress (a shard the configuration lacks) or is no longer wanted. Answers 202 and the account: it kept working on its own shard throughout; `move` shows `canceling` while the cron removes the copy from the target (null at once when the target is not configured), then null. A move past its cut-over (`frozen`, `leaving`) is finishing: 409.",
    tags,
    security,
    request: { params: AccountParam },
    responses: {
      202: jsonResponse(AccountSchema, "The account, its move canceled"),
      ...adminErrors([404, 409]),
    },
  }),
  async (c) => c.json(accountView(await cancelMove(c.get("directory"), c.env, c.req.valid("param").account_id)), 202),
);

admin.openapi(
  createRoute({
    method: "post",
    path: "/accounts/{account_id}/api-users",
    operationId: "createApiUser",
    summary: "Create an API user",
    description: "The answer carries the user's generated password, shown this once.",
    tags,
    security,
    request: { params: AccountParam, body: jsonBody(ApiUserInput) },
    responses: { 201: jsonResponse(ApiUserSchema, "The new user, with its password"), ...adminErrors([...BODY_ERRORS, 404]) },
  }),
  async (c) => {
    const { username, role } = c.req.valid("json");
    const { user, password } = await createApiUser(c.get("directory"), c.req.valid("param").account_id, username, role);
    return c.json(apiUserView(user, password), 201);
  },
);

admin.openapi(
  createRoute({
    method: "post",
    path: "/accounts/{account_id}/api-users/{username}/rotate",
    operationId: "rotateApiUserPassword",
    summary: "Give an API user a new password",
    description: "The old password stops working at once; the new one is shown this once.",
    tags,
    security,
    request: { params: UserParams },
    responses: { 200: jsonResponse(ApiUserSchema, "The user with a new password"), ...adminErrors([404]) },
  }),
  async (c) => {
    const { account_id, username } = c.req.valid("param");
    const { user, password } = await rotateApiUserPassword(c.get("directory"), account_id, username);
    return c.json(apiUserView(user, password), 200);
  },
);

admin.openapi(
  createRoute({
    method: "delete",
    path: "/accounts/{account_id}/api-users/{username}",
    operationId: "deleteApiUser",
    summary: "Delete an API user",
    tags,
    security,
    request: { params: UserParams },
    responses: { 204: { description: "Deleted" }, ...adminErrors([404]) },
  }),
  async (c) => {
    const { account_id, username } = c.req.valid("param");
    await deleteApiUser(c.get("directory"), account_id, username);
    return c.body(null, 204);
  },
);

admin.openapi(
  createRoute({
    method: "delete",
    path: "/accounts/{account_id}",
    operationId: "eraseAccount",
    summary: "Erase an account",
    description:
      "Answers 202 and the account is gone at once: its API users are deleted (their requests answer 401), and the account answers 404 here. Its data (counterparties, invoices, payments, subscriptions, the delivery log and its archive) is removed by the cron in bounded steps, then the account itself.",
    tags,
    security,
    request: { params: AccountParam },
    responses: {
      202: jsonResponse(z.object({ detail: z.string().openapi({ example: "The account is being erased." }) }), "Erasure started"),
      ...errorsOf([401, 403, 404, 409], { ...ADMIN_DESCRIPTIONS, 409: "The account is being moved to another shard" }, { throttled: false }),
    },
  }),
  async (c) => {
    await eraseAccount(c.get("directory"), c.env, c.req.valid("param").account_id);
    return c.json({ detail: "The account is being erased." }, 202);
  },
);

const ResealReportSchema = z
  .object({
    resealed: z.int().openapi({ description: "Subscriptions sealed again with the newest key by this call.", example: 200 }),
    unreadable: z
      .array(z.object({ id: z.string(), account_id: z.string() }))
      .openapi({ description: "Subscriptions no listed key opens: restore their key, or their owners re-create them." }),
    next_after: z
      .string()
      .nullable()
      .openapi({ description: "Call again with `?after=` this to go on; null when every subscription was looked at.", example: null }),
  })
  .openapi("ResealReport");

admin.openapi(
  createRoute({
    method: "post",
    path: "/encryption/reseal",
    operationId: "resealSubscriptions",
    summary: "Re-seal stored secrets with the newest ENCRYPTION_KEY",
    description:
      "After a new key is put first in ENCRYPTION_KEY (`NEW,OLD`), seals every subscription's credentials and signing secrets with it, shard by shard, 200 subscriptions a call: call again with `?after=<next_after>` until `next_after` is null, then the old key can be dropped.",
    tags,
    security,
    request: {
      query: z.object({
        after: z.string().optional().openapi({ description: "Go on from here (the last call's `next_after`: `<shard>/<subscription id>`)." }),
      }),
    },
    responses: { 200: jsonResponse(ResealReportSchema, "What this call re-sealed"), ...adminErrors([400, 500]) },
  }),
  async (c) => {
    const key = c.env.ENCRYPTION_KEY;
    return c.json(await walkShards(c.env, c.req.valid("query").after ?? null, (db, after) => resealSubscriptions(db, key, after)), 200);
  },
);

const ShardParam = z.object({
  name: z.string().openapi({ param: { name: "name", in: "path", description: "The shard's name (its binding is `SHARD_<name>`)." }, example: "A" }),
});

admin.openapi(
  createRoute({
    method: "get",
    path: "/shards",
    operationId: "listShards",
    summary: "List shards",
    description: "Every shard: its accounts, its size as D1 reports it, and whether it takes new accounts. Not paginated: a deployment has few.",
    tags,
    security,
    responses: { 200: jsonResponse(z.array(ShardSchema), "Every shard, by name"), ...adminErrors([]) },
  }),
  async (c) => c.json(await listShards(c.get("directory"), c.env), 200),
);

admin.openapi(
  createRoute({
    method: "patch",
    path: "/shards/{name}",
    operationId: "updateShard",
    summary: "Open or close a shard to new accounts",
    tags,
    security,
    request: { params: ShardParam, body: jsonBody(ShardInput) },
    responses: { 200: jsonResponse(ShardSchema, "The shard"), ...adminErrors([...BODY_ERRORS, 404]) },
  }),
  async (c) => c.json(await setShardOpen(c.get("directory"), c.env, c.req.valid("param").name, c.req.valid("json").open), 200),
);
