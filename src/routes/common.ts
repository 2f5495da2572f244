import { OpenAPIHono, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../env";
import { AppError, notFound } from "../errors";
import { fieldErrors } from "../lib/messages";
import { pageLinks, readPageRequest, type PageRequest } from "../lib/pagination";
import type { Page } from "../services/list-page";

/** Every sub-app shares the validation hook, so every 400 has DRF's shape. */
export function createRouter() {
  return new OpenAPIHono<AppEnv>({
    strict: false,
    defaultHook: (result) => {
      if (!result.success) throw new AppError("validation", "Invalid input.", fieldErrors(result.error.issues));
    },
  });
}

export const ErrorSchema = z.object({ detail: z.string() }).openapi("Error");
export const FieldErrorsSchema = z.record(z.string(), z.array(z.string())).openapi("FieldErrors");

const error = (description: string) => ({ description, content: { "application/json": { schema: ErrorSchema } } });

/** The error answers most routes share, for the OpenAPI document. */
export const errorResponses = {
  400: { description: "Invalid input", content: { "application/json": { schema: FieldErrorsSchema } } },
  401: error("Missing or wrong credentials"),
  404: error("Not found, or another account's"),
};

export function listEnvelope<T extends z.ZodTypeAny>(item: T, name: string) {
  return z
    .object({
      count: z.number().int(),
      next: z.string().url().nullable(),
      previous: z.string().url().nullable(),
      results: z.array(item),
    })
    .openapi(name);
}

export function jsonBody<T extends z.ZodTypeAny>(schema: T) {
  return { required: true, content: { "application/json": { schema } } } as const;
}

export function jsonResponse<T extends z.ZodTypeAny>(schema: T, description: string) {
  return { description, content: { "application/json": { schema } } } as const;
}

/** The request's paging, or 404 `Invalid page.` / `Invalid cursor.` as DRF answers. */
export function pageRequest(c: Context<AppEnv>): PageRequest {
  const request = readPageRequest(new URL(c.req.url).searchParams);
  if (typeof request === "string") throw notFound(request);
  return request;
}

/** The list envelope with absolute links that keep the request's filters; `results` are the page's rows as shown. */
export function envelope<Row, View>(c: Context<AppEnv>, page: Page<Row>, results: View[]) {
  const rows = page.rows;
  const edges =
    rows.length > 0 ? { first: page.key(rows[0]!), last: page.key(rows[rows.length - 1]!) } : null;
  const links = pageLinks(new URL(c.req.url), page.page, edges, page.hasNext, page.hasPrevious);
  return { count: page.count, ...links, results };
}

export const IdParam = (example: string) =>
  z.object({ id: z.string().openapi({ param: { name: "id", in: "path" }, example }) });
