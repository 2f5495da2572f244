import { createRoute, z } from "@hono/zod-openapi";
import { createAccount, listAccounts } from "../../services/accounts";
import { createApiUser, deleteApiUser, rotateApiUserPassword } from "../../services/api-users";
import { createRouter, envelope, ErrorSchema, errorResponses, jsonBody, jsonResponse, listEnvelope, pageRequest } from "../common";
import { AccountInput, AccountSchema, accountView, ApiUserInput, ApiUserSchema, apiUserView } from "./schemas";

const security = [{ adminToken: [] }];
const tags = ["admin"];
const adminErrors = { ...errorResponses, 403: jsonResponse(ErrorSchema, "The admin API is disabled") };
const AccountParam = z.object({ account_id: z.string().openapi({ param: { name: "account_id", in: "path" } }) });
const UserParams = AccountParam.extend({ username: z.string().openapi({ param: { name: "username", in: "path" } }) });

/** The admin API; `adminAuth` guards it in app.ts, before any body is read. */
export const admin = createRouter();

admin.openapi(
  createRoute({
    method: "post",
    path: "/accounts",
    tags,
    security,
    request: { body: jsonBody(AccountInput) },
    responses: { 201: jsonResponse(AccountSchema, "The new account"), ...adminErrors },
  }),
  async (c) => c.json(accountView(await createAccount(c.get("db"), c.req.valid("json").name)), 201),
);

admin.openapi(
  createRoute({
    method: "get",
    path: "/accounts",
    tags,
    security,
    responses: { 200: jsonResponse(listEnvelope(AccountSchema, "AccountList"), "Every account"), ...adminErrors },
  }),
  async (c) => {
    const page = await listAccounts(c.get("db"), pageRequest(c));
    return c.json(envelope(c, page, page.rows.map(accountView)), 200);
  },
);

admin.openapi(
  createRoute({
    method: "post",
    path: "/accounts/{account_id}/api-users",
    tags,
    security,
    request: { params: AccountParam, body: jsonBody(ApiUserInput) },
    responses: { 201: jsonResponse(ApiUserSchema, "The new user, with its password"), ...adminErrors },
  }),
  async (c) => {
    const { username, role } = c.req.valid("json");
    const { user, password } = await createApiUser(c.get("db"), c.req.valid("param").account_id, username, role);
    return c.json(apiUserView(user, password), 201);
  },
);

admin.openapi(
  createRoute({
    method: "post",
    path: "/accounts/{account_id}/api-users/{username}/rotate",
    tags,
    security,
    request: { params: UserParams },
    responses: { 200: jsonResponse(ApiUserSchema, "The user with a new password"), ...adminErrors },
  }),
  async (c) => {
    const { account_id, username } = c.req.valid("param");
    const { user, password } = await rotateApiUserPassword(c.get("db"), account_id, username);
    return c.json(apiUserView(user, password), 200);
  },
);

admin.openapi(
  createRoute({
    method: "delete",
    path: "/accounts/{account_id}/api-users/{username}",
    tags,
    security,
    request: { params: UserParams },
    responses: { 204: { description: "Deleted" }, ...adminErrors },
  }),
  async (c) => {
    const { account_id, username } = c.req.valid("param");
    await deleteApiUser(c.get("db"), account_id, username);
    return c.body(null, 204);
  },
);
