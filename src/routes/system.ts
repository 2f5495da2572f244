import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../app-env";
import { jsonResponse } from "./common";
import { withIdempotency } from "../idempotency/doc";
import { withBookmarks } from "./bookmark-doc";
import { withOneOrMany } from "../lib/filters";
import { registerDeliveryDoc } from "./webhooks/delivery-doc";

const Health = z.object({ status: z.literal("ok").openapi({ example: "ok" }) }).openapi("Health");

const TAGS = [
  { name: "counterparties", description: "Buyers and suppliers, with your own internal ids." },
  { name: "invoices", description: "Invoices from suppliers to buyers." },
  { name: "payments", description: "Payments of invoices, their lifecycle and events; poll them by `updated`." },
  { name: "webhooks", description: "Signed `payment.changed` deliveries: subscriptions, the delivery log and redelivery." },
  { name: "admin", description: "Accounts and API users, for operators with ADMIN_TOKEN." },
  { name: "service", description: "Health." },
];

const DOCS_PAGE = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Payments API</title><meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body>
<redoc spec-url="/openapi.json"></redoc>
<noscript>The API description is at <a href="/openapi.json">/openapi.json</a>.</noscript>
<script src="/docs/redoc.standalone.js"></script>
</body>
</html>`;

const DOCS_POLICY =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; worker-src 'self' blob:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'";

/**
 * The API's paths as the README, the `next` links and the `subscription` URLs write them: with
 * their trailing slash (each is served without it too), so that a client generated from the
 * document calls the same URLs its users read about.
 */
export function withTrailingSlashes<T>(document: T): T {
  const doc = document as { paths?: Record<string, unknown> };
  if (!doc.paths) return document;
  doc.paths = Object.fromEntries(
    Object.entries(doc.paths).map(([path, item]) => [/^\/(v1|v2|admin)\//.test(path) && !path.endsWith("/") ? `${path}/` : path, item]),
  );
  return document;
}

/** /healthz, /openapi.json (generated from the route schemas) and /docs (a page that renders it). */
export function mountSystemRoutes(app: OpenAPIHono<AppEnv>): void {
  // A browser lands on the docs; a program gets the service's links.
  app.get("/", (c) => {
    const origin = new URL(c.req.url).origin;
    if ((c.req.header("accept") ?? "").includes("text/html")) return c.redirect("/docs", 302);
    return c.json({ docs: `${origin}/docs`, openapi: `${origin}/openapi.json`, health: `${origin}/healthz` });
  });
  app.openapi(
    createRoute({
      method: "get",
      path: "/healthz",
      operationId: "getHealth",
      summary: "Health check",
      description: "Answers 200 while the Worker runs; no credentials needed.",
      tags: ["service"],
      security: [],
      responses: { 200: jsonResponse(Health, "The service is up") },
    }),
    (c) => c.json({ status: "ok" as const }, 200),
  );
  registerDeliveryDoc(app);
  app.openAPIRegistry.registerComponent("securitySchemes", "basicAuth", {
    type: "http",
    scheme: "basic",
    description: "An API user's username and generated password.",
  });
  app.openAPIRegistry.registerComponent("securitySchemes", "adminToken", {
    type: "http",
    scheme: "bearer",
    description: "`Authorization: Bearer <ADMIN_TOKEN>`.",
  });
  app.openAPIRegistry.registerComponent("securitySchemes", "subscriptionBasic", {
    type: "http",
    scheme: "basic",
    description: "Deliveries carry the subscription's own `username` and `password` as HTTP Basic; check them in your receiver.",
  });
  app.get("/openapi.json", (c) =>
    c.json(
      withTrailingSlashes(
        withBookmarks(
          withIdempotency(
            withOneOrMany(
              app.getOpenAPI31Document({
                openapi: "3.1.0",
                info: {
                  title: "Payments API",
                  version: "1.0.0",
                  description:
                    'Counterparties, invoices, payments and signed `payment.changed` webhooks. Every path also answers with a trailing slash. Lists answer `{count, next, previous, results}`; errors answer `{"detail": …}`, or field errors in Django REST framework\'s shape for 400.',
                  // OpenAPI 3.1 has `identifier` (an SPDX expression); the library's type is 3.0's, without it.
                  license: { name: "Proprietary", identifier: "LicenseRef-Proprietary" } as { name: string },
                },
                tags: TAGS,
                servers: [{ url: new URL(c.req.url).origin }],
              }),
            ),
          ),
        ),
      ),
    ),
  );
  // Everything the page loads comes from this origin (Redoc's bundle is a static asset); the policy makes sure.
  app.get("/docs", (c) => {
    c.header("Content-Security-Policy", DOCS_POLICY);
    c.header("X-Frame-Options", "DENY");
    return c.html(DOCS_PAGE);
  });
}
