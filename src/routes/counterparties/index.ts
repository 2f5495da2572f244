import { withInLookups } from "../../lib/filters";
import { createRoute } from "@hono/zod-openapi";
import { counterpartyView, createCounterparty, getCounterparty, listCounterparties, updateCounterparty } from "../../services/counterparties";
import {
  BODY_ERRORS,
  createRouter,
  DETAIL_ERRORS,
  errorsOf,
  IdParam,
  INVALID_PAGE,
  jsonBody,
  jsonResponse,
  listAnswer,
  LIST_ERRORS,
  listEnvelope,
  pageRequest,
  serviceContext,
  answerOf,
  keyed,
} from "../common";
import { CounterpartyInput, CounterpartyPatch, CounterpartyQuery, CounterpartySchema } from "./schemas";

const tags = ["counterparties"];
const security = [{ basicAuth: [] }];
const Params = IdParam("cpty_4kQ9x1Vd0aZbT2mN8pLr3s", "The counterparty's id (`cpty_…`).");
const clash = { 409: "`internal_id` is already used by a counterparty of this type in the account" };

export const counterpartiesRouter = createRouter();

counterpartiesRouter.openapi(
  createRoute({
    method: "get",
    path: "/",
    operationId: "listCounterparties",
    summary: "List counterparties",
    description: "The account's buyers and suppliers, oldest first. Filter by `type` and `internal_id` (both repeatable).",
    tags,
    security,
    request: { query: CounterpartyQuery },
    responses: {
      200: jsonResponse(listEnvelope(CounterpartySchema, "CounterpartyList"), "The account's counterparties"),
      ...errorsOf([...LIST_ERRORS], INVALID_PAGE),
    },
  }),
  async (c) => {
    const { type, internal_id } = withInLookups(c.req.valid("query"));
    const page = await listCounterparties(serviceContext(c), { type, internal_id }, pageRequest(c, "counterparties"));
    return listAnswer(
      c,
      page,
      page.rows.map((row) => row.json),
    );
  },
);

counterpartiesRouter.openapi(
  createRoute({
    method: "post",
    path: "/",
    operationId: "createCounterparty",
    summary: "Create a counterparty",
    tags,
    security,
    request: { body: jsonBody(CounterpartyInput) },
    responses: { 201: jsonResponse(CounterpartySchema, "Created"), ...errorsOf([...BODY_ERRORS, 409], clash) },
  }),
  async (c) => {
    const made = await createCounterparty(serviceContext(c), c.req.valid("json"), keyed(c, 201, counterpartyView.of));
    return answerOf(c, made, (row) => c.json(counterpartyView.of(row), 201));
  },
);

counterpartiesRouter.openapi(
  createRoute({
    method: "get",
    path: "/{id}",
    operationId: "getCounterparty",
    summary: "Get a counterparty",
    tags,
    security,
    request: { params: Params },
    responses: { 200: jsonResponse(CounterpartySchema, "The counterparty"), ...errorsOf([...DETAIL_ERRORS]) },
  }),
  async (c) => {
    const row = await getCounterparty(serviceContext(c), c.req.valid("param").id);
    return c.json(counterpartyView.of(row), 200);
  },
);

counterpartiesRouter.openapi(
  createRoute({
    method: "patch",
    path: "/{id}",
    operationId: "updateCounterparty",
    summary: "Rename a counterparty or change its internal id",
    tags,
    security,
    request: { params: Params, body: jsonBody(CounterpartyPatch) },
    responses: { 200: jsonResponse(CounterpartySchema, "Updated"), ...errorsOf([...BODY_ERRORS, 404, 409], clash) },
  }),
  async (c) => {
    const row = await updateCounterparty(serviceContext(c), c.req.valid("param").id, c.req.valid("json"));
    return c.json(counterpartyView.of(row), 200);
  },
);
