import { OpenAPIHono, z } from "@hono/zod-openapi";
import { HTTPException } from "hono/http-exception";
import { newTally, serverTiming } from "./db/counting-d1";
import { requestSession } from "./db/session";
import type { AppEnv } from "./app-env";
import { AppError } from "./errors";
import { isMoving, MOVING, MOVING_RETRY_AFTER_S } from "./services/moves";
import { drfMessage } from "./lib/messages";
import { adminAuth, basicAuth } from "./middleware/auth";
import { idempotency } from "./middleware/idempotency";
import { checkJsonBody, limitBody } from "./middleware/json-body";
import { requestId } from "./middleware/request-id";
import { admin } from "./routes/admin";
import { counterpartiesRouter } from "./routes/counterparties";
import { invoicesRouter } from "./routes/invoices";
import { allowedMethods } from "./routes/methods";
import { paymentsRouter } from "./routes/payments";
import { mountSystemRoutes } from "./routes/system";
import { webhooksRouter } from "./routes/webhooks";
import { jwksRouter } from "./routes/webhooks/jwks";

z.config({ customError: drfMessage });

export function createApp() {
  const app = new OpenAPIHono<AppEnv>({ strict: false });

  app.use("*", requestId);
  app.use("*", async (c, next) => {
    // Benchmarks and local work: what the request cost D1 (rows read and written, SQL time, statements, round trips), in a Server-Timing header and the log line.
    const tally = c.env.SERVER_TIMING === "true" ? newTally() : undefined;
    c.set("d1Tally", tally);
    c.set("directory", requestSession(c.env.DB, "first-primary", tally).db);
    await next();
    if (tally) c.res.headers.set("Server-Timing", serverTiming(tally));
  });
  // Public keys need no credentials: answered before authentication (routes/webhooks/jwks.ts).
  app.route("/v1/webhooks", jwksRouter);
  // Who is asking comes before what they sent, as in DRF: no body is read for a caller who is not let in.
  // Authentication routes the request to its account's shard (middleware/auth.ts).
  for (const prefix of ["/v1/*", "/v2/*"]) app.use(prefix, basicAuth);
  app.use("/admin/*", adminAuth);
  app.use("*", limitBody, checkJsonBody);
  for (const prefix of ["/v1/*", "/v2/*"]) app.use(prefix, idempotency);

  app.route("/admin", admin);
  app.route("/v1/counterparties", counterpartiesRouter);
  app.route("/v1/invoices", invoicesRouter);
  app.route("/v1/webhooks", webhooksRouter);
  app.route("/v2/payments", paymentsRouter);
  mountSystemRoutes(app);

  app.notFound((c) => {
    const allow = allowedMethods(app.routes, new URL(c.req.url).pathname);
    if (allow.length > 0) {
      c.header("Allow", allow.join(", "));
      if (c.req.method === "OPTIONS") return c.body(null, 204);
      return c.json({ detail: `Method "${c.req.method}" not allowed.` }, 405);
    }
    return c.json({ detail: "Not found." }, 404);
  });

  app.onError(async (error, c) => {
    // A write refused by the source shard during its account's move cut-over (services/moves/).
    if (isMoving(error)) {
      c.header("Retry-After", String(MOVING_RETRY_AFTER_S));
      return c.json({ detail: MOVING }, 503);
    }
    if (error instanceof AppError) {
      for (const [name, value] of Object.entries(error.headers ?? {})) c.header(name, value);
      return c.json(error.body(), error.status);
    }
    if (error instanceof HTTPException && error.status < 500) {
      return c.json({ detail: error.message || "Bad request." }, error.status);
    }
    console.error(JSON.stringify({ type: "error", request_id: c.get("requestId"), error: String(error), stack: (error as Error)?.stack }));
    return c.json({ detail: "A server error occurred." }, 500);
  });

  return app;
}
