import { OpenAPIHono, z } from "@hono/zod-openapi";
import type { Context, TypedResponse } from "hono";
import type { JsonText } from "../db/json-view";
import type { AppEnv } from "../app-env";
import { AppError, notFound } from "../errors";
import { fieldErrors } from "../lib/messages";
import { pageLinks, readPageRequest, type PageRequest } from "../lib/pagination";
import { pageBounds, type ListName } from "../lib/list-bounds";
import type { ServiceContext } from "../context";
import type { Page } from "../db/list-page";
import { SQL } from "drizzle-orm";
import { answerStatement, claimKey, keyedWrite, settle, UNKEYED, type KeyDecision, type Keyed, type KeyedWrite } from "../idempotency";
import { keyDecidedAnswer } from "../middleware/idempotency";
import { encrypt } from "../lib/encryption";
import { traceOf, type Trace } from "../webhooks";

/** The context a service verb works in, for this request's caller. */
export function serviceContext(c: Context<AppEnv>): ServiceContext {
  const caller = c.get("caller");
  return {
    db: c.get("db"),
    accountId: caller.accountId,
    caller,
    queue: { queue: c.env.DELIVERIES, shard: caller.shard },
    keys: { encryptionKey: c.env.ENCRYPTION_KEY, allowLocalUrls: c.env.ALLOW_LOCAL_WEBHOOK_URLS === "true" },
    archive: c.env.ARCHIVE,
    later: laterOf(c),
  };
}

/** The request's waitUntil, when it runs with an execution context. */
function laterOf(c: Context<AppEnv>): ServiceContext["later"] {
  try {
    const execution = c.executionCtx;
    return (work) => execution.waitUntil(work);
  } catch {
    return undefined;
  }
}

/** The trace a write's deliveries carry: its `traceparent` and `tracestate` when valid, else a new one. */
export function writeTrace(c: Context<AppEnv>): Trace {
  return traceOf(c.req.header("traceparent"), c.req.header("tracestate"));
}

/**
 * The request's Idempotency-Key as parts of its verb's batch (idempotency/keyed.ts): the verb
 * claims the key, requires it in its first write, and stores its answer with it: `status`, and
 * the body `render` makes of what it wrote (JSON of a view, or SQL that makes the JSON from the
 * batch's rows); `sealed` encrypts a body that carries secrets. `claimed`: the route claimed the
 * key first (`claimFirst`). Without a key, UNKEYED: the parts add nothing.
 */
export function keyed<T>(c: Context<AppEnv>, status: number, render: (value: T) => unknown, { sealed = false, claimed = false } = {}): KeyedWrite<T> {
  const key = c.get("key");
  if (!key) return UNKEYED;
  const db = c.get("db");
  return keyedWrite<T>(
    db,
    key,
    async (value, guard) => {
      const rendered = render(value);
      const text = rendered instanceof SQL ? rendered : JSON.stringify(rendered);
      const body = sealed && typeof text === "string" ? await encrypt(c.env.ENCRYPTION_KEY, text) : text;
      return [answerStatement(db, key, status, body, sealed, guard)];
    },
    { claimed },
  );
}

/**
 * For a route that reads before it writes: claims the request's key in a round trip of its own
 * (one more than a write that claims in its batch). What the key decided instead (for `answerOf`),
 * or null to go on.
 */
export async function claimFirst(c: Context<AppEnv>): Promise<{ decided: KeyDecision } | null> {
  const key = c.get("key");
  const decided = key ? await claimKey(c.get("db"), key) : null;
  return decided ? { decided } : null;
}

/**
 * A route that writes nothing it could not repeat, under its key: claims the key first, then
 * answers what `run` answers, stored with the key after (no batch of its own stores it).
 */
export async function keyedAfter<R extends Response>(c: Context<AppEnv>, run: () => Promise<R>): Promise<R> {
  const first = await claimFirst(c);
  if (first) return (await keyDecidedAnswer(c, first.decided)) as R;
  const answer = await run();
  const key = c.get("key");
  if (key) await settle(c.get("db"), key, answer.status, await answer.clone().text());
  return answer;
}

/**
 * A keyed verb's outcome as the route's answer: what the key decided instead (the stored answer,
 * a 422 or a 409: an answer the route's typed responses do not list, hence the cast), or `answer`
 * of what the verb made.
 */
export async function answerOf<T, R>(c: Context<AppEnv>, outcome: Keyed<T>, answer: (value: T) => R): Promise<R> {
  return "decided" in outcome ? ((await keyDecidedAnswer(c, outcome.decided)) as R) : answer(outcome.ran);
}

/** Every sub-app shares the validation hook, so every 400 has DRF's shape. */
export function createRouter() {
  return new OpenAPIHono<AppEnv>({
    strict: false,
    defaultHook: (result) => {
      if (!result.success) throw new AppError("validation", "Invalid input.", fieldErrors(result.error.issues));
    },
  });
}

export const ErrorSchema = z
  .object({ detail: z.string().openapi({ description: "What went wrong, in plain words.", example: "Not found." }) })
  .openapi("Error");
export const FieldErrorsSchema = z.record(z.string(), z.array(z.string())).openapi("FieldErrors", {
  description: "Django REST framework's validation shape: each field name to its messages; `non_field_errors` for the body as a whole.",
  example: { amount_cents: ["Ensure this value is greater than or equal to 1."], currency: ["This field is required."] },
});

export type ErrorStatus = 400 | 401 | 403 | 404 | 409 | 410 | 413 | 415 | 429 | 500 | 503;

const ERROR_DESCRIPTIONS: Record<ErrorStatus, string> = {
  400: "Invalid input: a field error for each bad field or filter",
  401: "Missing or wrong credentials (with a `WWW-Authenticate` challenge)",
  403: "The caller may not do this",
  404: "Not found, or another account's",
  409: "Conflicts with the current state",
  410: "Gone",
  413: "The body is larger than 1 MiB",
  415: "The body is not JSON",
  429: "Over the API user's rate limit (1,000 requests per 10 s); retry after `Retry-After` seconds",
  500: "ENCRYPTION_KEY is missing or malformed: `Service is not configured.`",
  503: "`Account is moving; retry shortly.`: the few seconds of a move's cut-over; retry after `Retry-After` seconds",
};

/**
 * The error answers one operation can give, for the OpenAPI document: each status with the shape
 * it has (field errors for 400, `{detail}` otherwise) and a description, which `described` may
 * make specific to the operation. An operation of API users (401) can also be throttled (429).
 */
export function errorsOf(statuses: ErrorStatus[], described: Partial<Record<ErrorStatus, string>> = {}, { throttled = statuses.includes(401) } = {}) {
  const out: Record<number, { description: string; content: { "application/json": { schema: z.ZodTypeAny } } }> = {};
  for (const status of throttled ? [...statuses, 429 as const] : statuses) {
    const schema = status === 400 ? z.union([FieldErrorsSchema, ErrorSchema]) : ErrorSchema;
    out[status] = { description: described[status] ?? ERROR_DESCRIPTIONS[status], content: { "application/json": { schema } } };
  }
  return out;
}

/** The errors every kind of operation shares. */
export const LIST_ERRORS = [400, 401, 404] as const satisfies ErrorStatus[];
export const DETAIL_ERRORS = [401, 404] as const satisfies ErrorStatus[];
export const BODY_ERRORS = [400, 401, 413, 415] as const satisfies ErrorStatus[];
export const INVALID_PAGE = { 404: "`Invalid page.`: a page past the end, a page that is not a positive integer, or a bad cursor" };

export function listEnvelope<T extends z.ZodTypeAny>(item: T, name: string) {
  return z
    .object({
      count: z.number().int().openapi({ description: "How many rows match the filters, over every page.", example: 1 }),
      next: z.string().url().nullable().openapi({
        description: "The next page (absolute URL keeping the filters, with an opaque cursor), or null on the last page.",
        example: null,
      }),
      previous: z.string().url().nullable().openapi({ description: "The previous page, or null on the first.", example: null }),
      results: z.array(item).openapi({ description: "This page's rows, in the list's order." }),
    })
    .openapi(name);
}

export function jsonBody<T extends z.ZodTypeAny>(schema: T) {
  return { required: true, content: { "application/json": { schema } } } as const;
}

export function jsonResponse<T extends z.ZodTypeAny>(schema: T, description: string) {
  return { description, content: { "application/json": { schema } } } as const;
}

/** The request's paging within its list's bounds (lib/list-bounds.ts), or 404 `Invalid page.` / `Invalid cursor.` as DRF answers. */
export function pageRequest(c: Context<AppEnv>, list: ListName): PageRequest {
  const request = readPageRequest(new URL(c.req.url).searchParams, pageBounds(list));
  if (typeof request === "string") throw notFound(request);
  return request;
}

/** The list envelope with absolute links that keep the request's filters; `results` are the page's rows as shown. */
export function envelope<Row, View>(c: Context<AppEnv>, page: Page<Row>, results: View[]) {
  const rows = page.rows;
  const edges = rows.length > 0 ? { first: page.key(rows[0]!), last: page.key(rows[rows.length - 1]!) } : null;
  const links = pageLinks(new URL(c.req.url), page.page, edges, page.hasNext, page.hasPrevious);
  return { count: page.count, ...links, results };
}

/**
 * A list's answer when its rows come as JSON text already (made by SQL, db/json-view.ts, or
 * stored): the envelope is serialised around them, and no row is parsed or serialised again.
 */
export function listAnswer<Row, View>(c: Context<AppEnv>, page: Page<Row>, results: JsonText<View>[]) {
  const head = JSON.stringify(envelope(c, page, [])); // ends with `"results":[]}`
  const answer = c.body(`${head.slice(0, -2)}${results.join(",")}]}`, 200, { "content-type": "application/json" });
  return answer as unknown as TypedResponse<ReturnType<typeof envelope<Row, View>>, 200, "json">;
}

/** A timestamp field: ISO 8601 in UTC with milliseconds. */
export const timestamp = (description: string) =>
  z
    .string()
    .datetime()
    .openapi({ description: `${description} ISO 8601, UTC, milliseconds.`, example: "2026-11-21T10:15:30.123Z" });

export const IdParam = (example: string, description = "The object's id.") =>
  z.object({ id: z.string().openapi({ param: { name: "id", in: "path", description }, example }) });
