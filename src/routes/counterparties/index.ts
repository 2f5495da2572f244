import { createRoute } from "@hono/zod-openapi";
import {
  createCounterparty,
  getCounterparty,
  listCounterparties,
  updateCounterparty,
} from "../../services/counterparties";
import {
  createRouter,
  envelope,
  ErrorSchema,
  errorResponses,
  IdParam,
  jsonBody,
  jsonResponse,
  listEnvelope,
  pageRequest,
} from "../common";
import { CounterpartyInput, CounterpartyPatch, CounterpartyQuery, CounterpartySchema, counterpartyView } from "./schemas";

const tags = ["counterparties"];
const security = [{ basicAuth: [] }];
const Params = IdParam("cpty_4kQ9x1Vd0aZbT2mN8pLr3s");
const clash = { 409: jsonResponse(ErrorSchema, "internal_id and type already used in this account") };

export const counterpartiesRouter = createRouter();

counterpartiesRouter.openapi(
  createRoute({
    method: "get",
    path: "/",
    tags,
    security,
    request: { query: CounterpartyQuery },
    responses: { 200: jsonResponse(listEnvelope(CounterpartySchema, "CounterpartyList"), "The account's counterparties"), ...errorResponses },
  }),
  async (c) => {
    const { type, internal_id } = c.req.valid("query");
    const page = await listCounterparties(c.get("db"), c.get("caller").accountId, { type, internal_id }, pageRequest(c));
    return c.json(envelope(c, page, page.rows.map(counterpartyView)), 200);
  },
);

counterpartiesRouter.openapi(
  createRoute({
    method: "post",
    path: "/",
    tags,
    security,
    request: { body: jsonBody(CounterpartyInput) },
    responses: { 201: jsonResponse(CounterpartySchema, "Created"), ...errorResponses, ...clash },
  }),
  async (c) => {
    const row = await createCounterparty(c.get("db"), c.get("caller").accountId, c.req.valid("json"));
    return c.json(counterpartyView(row), 201);
  },
);

counterpartiesRouter.openapi(
  createRoute({
    method: "get",
    path: "/{id}",
    tags,
    security,
    request: { params: Params },
    responses: { 200: jsonResponse(CounterpartySchema, "The counterparty"), ...errorResponses },
  }),
  async (c) => {
    const row = await getCounterparty(c.get("db"), c.get("caller").accountId, c.req.valid("param").id);
    return c.json(counterpartyView(row), 200);
  },
);

counterpartiesRouter.openapi(
  createRoute({
    method: "patch",
    path: "/{id}",
    tags,
    security,
    request: { params: Params, body: jsonBody(CounterpartyPatch) },
    responses: { 200: jsonResponse(CounterpartySchema, "Updated"), ...errorResponses, ...clash },
  }),
  async (c) => {
    const row = await updateCounterparty(c.get("db"), c.get("caller").accountId, c.req.valid("param").id, c.req.valid("json"));
    return c.json(counterpartyView(row), 200);
  },
);
