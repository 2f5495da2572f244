import { createRoute } from "@hono/zod-openapi";
import { forbidden } from "../../errors";
import { createPayment, getPayment, listPayments, recordPaymentEvent } from "../../services/payments";
import { deliveryOutbox } from "../../webhooks/outbox";
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
import { PaymentEventInput, PaymentEventSchema, PaymentInput, PaymentQuery, PaymentSchema } from "./schemas";

const tags = ["payments"];
const security = [{ basicAuth: [] }];
const Params = IdParam("pmt_Q2w9Er7tY1uI3oP5aS8dF0");

export const paymentsRouter = createRouter();

// Permission before parsing, as DRF does: a client gets 403 whatever its body.
paymentsRouter.use("/:id/events", async (c, next) => {
  if (c.get("caller").role !== "processor") throw forbidden("Only a processor may record payment events.");
  return next();
});

paymentsRouter.openapi(
  createRoute({
    method: "get",
    path: "/",
    tags,
    security,
    description: "Poll with `?updated__gt=<last seen updated>&ordering=updated`: `updated` is strictly increasing per account.",
    request: { query: PaymentQuery },
    responses: { 200: jsonResponse(listEnvelope(PaymentSchema, "PaymentList"), "The account's payments"), ...errorResponses },
  }),
  async (c) => {
    const { page: _page, page_size: _size, cursor: _cursor, ...filters } = c.req.valid("query");
    const page = await listPayments(c.get("db"), c.get("caller").accountId, filters, pageRequest(c));
    return c.json(envelope(c, page, page.results), 200);
  },
);

paymentsRouter.openapi(
  createRoute({
    method: "post",
    path: "/",
    tags,
    security,
    request: { body: jsonBody(PaymentInput) },
    responses: {
      201: jsonResponse(PaymentSchema, "Created: status pending, one PU00 event"),
      ...errorResponses,
      409: jsonResponse(ErrorSchema, "An invoice already belongs to a live payment"),
    },
  }),
  async (c) => c.json(await createPayment(c.get("db"), c.get("caller").accountId, c.req.valid("json"), deliveryOutbox(c.env)), 201),
);

paymentsRouter.openapi(
  createRoute({
    method: "get",
    path: "/{id}",
    tags,
    security,
    request: { params: Params },
    responses: { 200: jsonResponse(PaymentSchema, "The payment"), ...errorResponses },
  }),
  async (c) => c.json(await getPayment(c.get("db"), c.get("caller").accountId, c.req.valid("param").id), 200),
);

paymentsRouter.openapi(
  createRoute({
    method: "post",
    path: "/{id}/events",
    tags,
    security,
    description: "Processors only. The payment moves with the event; a move the lifecycle forbids is 409.",
    request: { params: Params, body: jsonBody(PaymentEventInput) },
    responses: {
      201: jsonResponse(PaymentEventSchema, "The new event"),
      ...errorResponses,
      403: jsonResponse(ErrorSchema, "The caller is not a processor"),
      409: jsonResponse(ErrorSchema, "The lifecycle forbids this move"),
    },
  }),
  async (c) => {
    const { accountId } = c.get("caller");
    const event = await recordPaymentEvent(c.get("db"), accountId, c.req.valid("param").id, c.req.valid("json"), deliveryOutbox(c.env));
    return c.json(event, 201);
  },
);
