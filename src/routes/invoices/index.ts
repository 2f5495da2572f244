import { withInLookups } from "../../lib/filters";
import { createRoute } from "@hono/zod-openapi";
import { createInvoice, getInvoice, invoiceView, listInvoices } from "../../services/invoices";
import {
  BODY_ERRORS,
  createRouter,
  DETAIL_ERRORS,
  errorsOf,
  IdParam,
  INVALID_PAGE,
  jsonBody,
  jsonResponse,
  answerOf,
  keyed,
  listAnswer,
  LIST_ERRORS,
  listEnvelope,
  pageRequest,
  serviceContext,
} from "../common";
import { InvoiceDetailSchema, InvoiceInput, InvoiceQuery, InvoiceSchema } from "./schemas";

const tags = ["invoices"];
const security = [{ basicAuth: [] }];

export const invoicesRouter = createRouter();

invoicesRouter.openapi(
  createRoute({
    method: "get",
    path: "/",
    operationId: "listInvoices",
    summary: "List invoices",
    description: "The account's invoices, oldest first. Filter by `invoice_number` (repeatable) and by `created` bounds.",
    tags,
    security,
    request: { query: InvoiceQuery },
    responses: { 200: jsonResponse(listEnvelope(InvoiceSchema, "InvoiceList"), "The account's invoices"), ...errorsOf([...LIST_ERRORS], INVALID_PAGE) },
  }),
  async (c) => {
    const { page: _page, page_size: _size, cursor: _cursor, ...filters } = withInLookups(c.req.valid("query"));
    const page = await listInvoices(serviceContext(c), filters, pageRequest(c, "invoices"));
    return listAnswer(
      c,
      page,
      page.rows.map((row) => row.json),
    );
  },
);

invoicesRouter.openapi(
  createRoute({
    method: "post",
    path: "/",
    operationId: "createInvoice",
    summary: "Create an invoice",
    description: "An invoice from a supplier to a buyer of the same account.",
    tags,
    security,
    request: { body: jsonBody(InvoiceInput) },
    responses: { 201: jsonResponse(InvoiceSchema, "Created"), ...errorsOf([...BODY_ERRORS]) },
  }),
  async (c) =>
    answerOf(c, await createInvoice(serviceContext(c), c.req.valid("json"), keyed(c, 201, invoiceView.of)), (row) => c.json(invoiceView.of(row), 201)),
);

invoicesRouter.openapi(
  createRoute({
    method: "get",
    path: "/{id}",
    operationId: "getInvoice",
    summary: "Get an invoice",
    tags,
    security,
    request: { params: IdParam("inv_8Hc2mQpL0xTz7rVb1NwK5e", "The invoice's id (`inv_…`).") },
    responses: { 200: jsonResponse(InvoiceDetailSchema, "The invoice, and the payment that covers it"), ...errorsOf([...DETAIL_ERRORS]) },
  }),
  async (c) => {
    const invoice = await getInvoice(serviceContext(c), c.req.valid("param").id);
    return c.json({ ...invoiceView.of(invoice), payment_id: invoice.paymentId }, 200);
  },
);
