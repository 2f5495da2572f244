import { createRoute } from "@hono/zod-openapi";
import { createInvoice, getInvoice, listInvoices } from "../../services/invoices";
import { createRouter, envelope, errorResponses, IdParam, jsonBody, jsonResponse, listEnvelope, pageRequest } from "../common";
import { InvoiceInput, InvoiceQuery, InvoiceSchema, invoiceView } from "./schemas";

const tags = ["invoices"];
const security = [{ basicAuth: [] }];

export const invoicesRouter = createRouter();

invoicesRouter.openapi(
  createRoute({
    method: "get",
    path: "/",
    tags,
    security,
    request: { query: InvoiceQuery },
    responses: { 200: jsonResponse(listEnvelope(InvoiceSchema, "InvoiceList"), "The account's invoices"), ...errorResponses },
  }),
  async (c) => {
    const { page: _page, page_size: _size, cursor: _cursor, ...filters } = c.req.valid("query");
    const page = await listInvoices(c.get("db"), c.get("caller").accountId, filters, pageRequest(c));
    return c.json(envelope(c, page, page.rows.map(invoiceView)), 200);
  },
);

invoicesRouter.openapi(
  createRoute({
    method: "post",
    path: "/",
    tags,
    security,
    request: { body: jsonBody(InvoiceInput) },
    responses: { 201: jsonResponse(InvoiceSchema, "Created"), ...errorResponses },
  }),
  async (c) => c.json(invoiceView(await createInvoice(c.get("db"), c.get("caller").accountId, c.req.valid("json"))), 201),
);

invoicesRouter.openapi(
  createRoute({
    method: "get",
    path: "/{id}",
    tags,
    security,
    request: { params: IdParam("inv_8Hc2mQpL0xTz7rVb1NwK5e") },
    responses: { 200: jsonResponse(InvoiceSchema, "The invoice"), ...errorResponses },
  }),
  async (c) => c.json(invoiceView(await getInvoice(c.get("db"), c.get("caller").accountId, c.req.valid("param").id)), 200),
);
