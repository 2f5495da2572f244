import type { MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { AppEnv } from "../app-env";
import { AppError } from "../errors";
import { notAnObject } from "../lib/messages";

export const MAX_BODY_BYTES = 1024 * 1024;

const JSON_TYPE = /^application\/([\w.-]+\+)?json$/i;

/** The methods whose body is read; any other method's body is ignored, never read. */
const WRITES = ["POST", "PUT", "PATCH"];

const limit = bodyLimit({
  maxSize: MAX_BODY_BYTES,
  onError: () => {
    throw new AppError("payload_too_large", "Request body is larger than 1 MiB.");
  },
});

/** Bodies over 1 MiB answer 413 before they are read whole. */
export const limitBody: MiddlewareHandler<AppEnv> = (c, next) => (WRITES.includes(c.req.method) ? limit(c, next) : next());

/**
 * Every write takes JSON: a body of another content type is 415 (and is not read), malformed JSON
 * 400, and JSON that is not an object 400. An empty body reads as `{}`, so the route's schema says
 * what is missing. The parsed text stays cached on the request for the route's validator.
 */
export const checkJsonBody: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (!WRITES.includes(c.req.method)) return next();
  const mediaType = (c.req.header("content-type") ?? "").split(";")[0]!.trim();
  if (mediaType && !JSON_TYPE.test(mediaType)) {
    throw new AppError("unsupported_media_type", `Unsupported media type "${mediaType}" in request.`);
  }
  const text = await c.req.text();
  if (!mediaType && text !== "") {
    throw new AppError("unsupported_media_type", 'Unsupported media type "" in request.');
  }
  if (text.trim() === "") {
    // Hono caches each body read as a promise; the validator then reads this.
    (c.req.bodyCache as Record<string, unknown>).text = Promise.resolve("{}");
    return next();
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new AppError("validation", `JSON parse error - ${(error as Error).message}`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new AppError("validation", "Invalid input.", { non_field_errors: [notAnObject(value)] });
  }
  return next();
};
