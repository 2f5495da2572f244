import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../app-env";
import { archivedDay } from "../../webhooks";
import { serviceContext } from "../common";
import { Params, security, tags, webhookErrors } from "./shared";

const DAY = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/;

/** The delivery log's archive (docs/interface.md, "Retention" and "Archive"): what retention removed, a file per subscription and day. */
export function registerArchiveRoutes(router: OpenAPIHono<AppEnv>): void {
  router.openapi(
    createRoute({
      method: "get",
      path: "/{id}/archive/{day}",
      operationId: "getWebhookArchive",
      summary: "A day of archived deliveries",
      description:
        "The deliveries made that UTC day that retention has removed from the log (`RETENTION_DAYS` after they ended): gzip-compressed NDJSON, one delivery record per line (as the log shows it, with `subscription_id`). 404 when that day has none, or when no archive is bound.",
      tags,
      security,
      request: {
        params: Params.extend({
          day: z
            .string()
            .regex(DAY)
            .openapi({ param: { name: "day", in: "path", description: "The UTC day, YYYY-MM-DD." }, example: "2026-10-20" }),
        }),
      },
      responses: {
        200: { description: "The day's file", content: { "application/gzip": { schema: z.string().openapi({ format: "binary" }) } } },
        ...webhookErrors([400, 401, 404]),
      },
    }),
    async (c) => {
      const { id, day } = c.req.valid("param");
      const file = await archivedDay(serviceContext(c), id, day);
      return new Response(file, {
        status: 200,
        headers: { "content-type": "application/gzip", "content-disposition": `attachment; filename="${id}-${day}.ndjson.gz"` },
      }) as never;
    },
  );
}
