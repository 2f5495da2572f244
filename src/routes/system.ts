import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../env";

const DOCS_PAGE = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Payments API</title><meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body>
<redoc spec-url="/openapi.json"></redoc>
<noscript>The API description is at <a href="/openapi.json">/openapi.json</a>.</noscript>
<script src="https://cdn.redoc.ly/redoc/v2.1.5/bundles/redoc.standalone.js"></script>
</body>
</html>`;

/** /healthz, /openapi.json (generated from the route schemas) and /docs (a page that renders it). */
export function mountSystemRoutes(app: OpenAPIHono<AppEnv>): void {
  app.get("/healthz", (c) => c.json({ status: "ok" }));
  app.openAPIRegistry.registerComponent("securitySchemes", "basicAuth", { type: "http", scheme: "basic" });
  app.openAPIRegistry.registerComponent("securitySchemes", "adminToken", { type: "http", scheme: "bearer" });
  app.get("/openapi.json", (c) =>
    c.json(
      app.getOpenAPI31Document({
        openapi: "3.1.0",
        info: {
          title: "Payments API",
          version: "1.0.0",
          description: "Counterparties, invoices, payments and signed payment.changed webhooks. Every path also answers with a trailing slash.",
        },
        servers: [{ url: new URL(c.req.url).origin }],
      }),
    ),
  );
  app.get("/docs", (c) => c.html(DOCS_PAGE));
}
