import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../app-env";

const SANE = /^[A-Za-z0-9._:\-]{1,128}$/;

/** Keeps a caller's sane `x-request-id`, or makes one; echoes it and logs one line per request. */
export const requestId: MiddlewareHandler<AppEnv> = async (c, next) => {
  const given = c.req.header("x-request-id");
  const id = given && SANE.test(given) ? given : crypto.randomUUID();
  c.set("requestId", id);
  const started = Date.now();
  await next();
  c.header("x-request-id", id);
  console.log(
    JSON.stringify({
      type: "request",
      request_id: id,
      method: c.req.method,
      path: new URL(c.req.url).pathname,
      status: c.res.status,
      duration_ms: Date.now() - started,
      account_id: c.get("caller")?.accountId,
      d1_rows_read: c.get("d1Tally")?.rowsRead,
      d1_rows_written: c.get("d1Tally")?.rowsWritten,
      d1_calls: c.get("d1Tally")?.calls,
    }),
  );
};
