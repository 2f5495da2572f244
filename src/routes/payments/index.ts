import { withInLookups } from "../../lib/filters";
import { createRoute } from "@hono/zod-openapi";
import { forbidden } from "../../errors";
import { createPayment, getPayment, listPayments, MAX_EVENTS, recordPaymentEvent } from "../../services/payments";
import {
  BODY_ERRORS,
  createRouter,
  DETAIL_ERRORS,
  listAnswer,
  errorsOf,
  IdParam,
  INVALID_PAGE,
  jsonBody,
  jsonResponse,
  LIST_ERRORS,
  listEnvelope,
  pageRequest,
  serviceContext,
  answerOf,
  keyed,
  writeTrace,
} from "../common";
import type { SQL } from "drizzle-orm";
import { PaymentEventInput, PaymentEventSchema, PaymentInput, PaymentQuery, PaymentSchema } from "./schemas";

const tags = ["payments"];
const security = [{ basicAuth: [] }];
const Params = IdParam("pmt_Q2w9Er7tY1uI3oP5aS8dF0", "The payment's id (`pmt_…`).");
const moving = { 503: "`Account is moving; retry shortly.`: the few seconds of a move's cut-over; retry after `Retry-After` seconds" };

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
    operationId: "listPayments",
    summary: "List and poll payments",
    description:
      "The account's payments, each as its whole detail. To synchronise, poll `?ordering=updated&updated__gt=<the last updated you saw>`: `updated` is strictly increasing within an account, so nothing is missed.",
    tags,
    security,
    request: { query: PaymentQuery },
    responses: { 200: jsonResponse(listEnvelope(PaymentSchema, "PaymentList"), "The account's payments"), ...errorsOf([...LIST_ERRORS], INVALID_PAGE) },
  }),
  async (c) => {
    const { page: _page, page_size: _size, cursor: _cursor, ...filters } = withInLookups(c.req.valid("query"));
    const page = await listPayments(serviceContext(c), filters, pageRequest(c, "payments"));
    return listAnswer(c, page, page.results);
  },
);

paymentsRouter.openapi(
  createRoute({
    method: "post",
    path: "/",
    operationId: "createPayment",
    summary: "Create a payment",
    description:
      "Pays one or more invoices of one buyer and supplier. The payment starts `pending` with one `PU00` event, and each active webhook subscription of the account gets a `payment.changed` delivery.",
    tags,
    security,
    request: { body: jsonBody(PaymentInput) },
    responses: {
      201: jsonResponse(PaymentSchema, "Created: status pending, one PU00 event"),
      ...errorsOf([...BODY_ERRORS, 409, 503], { 409: "An invoice already belongs to a payment that is not canceled or failed", ...moving }),
    },
  }),
  async (c) =>
    answerOf(
      c,
      await createPayment(
        serviceContext(c),
        c.req.valid("json"),
        keyed(c, 201, (detail: SQL) => detail),
        writeTrace(c),
      ),
      (detail) => c.json(detail, 201),
    ),
);

paymentsRouter.openapi(
  createRoute({
    method: "get",
    path: "/{id}",
    operationId: "getPayment",
    summary: "Get a payment",
    tags,
    security,
    request: { params: Params },
    responses: { 200: jsonResponse(PaymentSchema, "The payment"), ...errorsOf([...DETAIL_ERRORS]) },
  }),
  async (c) => c.json(await getPayment(serviceContext(c), c.req.valid("param").id), 200),
);

paymentsRouter.openapi(
  createRoute({
    method: "post",
    path: "/{id}/events",
    operationId: "createPaymentEvent",
    summary: "Record a payment event",
    description:
      "Processors only. The payment changes with the event: its status (if given, as the lifecycle allows), its instrument number (if given) and its refund reason (with `refunded`); everything the event does not name is kept. Each active webhook subscription gets a `payment.changed` delivery.",
    tags,
    security,
    request: { params: Params, body: jsonBody(PaymentEventInput) },
    responses: {
      201: jsonResponse(PaymentEventSchema, "The new event"),
      ...errorsOf([...BODY_ERRORS, 403, 404, 409, 503], {
        403: "The caller is a client; only a processor records events",
        409: `The lifecycle forbids this move, or the payment already has ${MAX_EVENTS} events (the payment is unchanged)`,
        ...moving,
      }),
    },
  }),
  async (c) => {
    const made = await recordPaymentEvent(
      serviceContext(c),
      c.req.valid("param").id,
      c.req.valid("json"),
      keyed(c, 201, (body: SQL) => body),
      writeTrace(c),
    );
    return answerOf(c, made, (event) => c.json(event, 201));
  },
);
