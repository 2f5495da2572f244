import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../app-env";
import { ackFeed, readFeed, signedHeaders } from "../../webhooks";
import { toIso } from "../../lib/time";
import { pageBounds } from "../../lib/list-bounds";
import { fromPrimary } from "../../middleware/bookmark";
import { BODY_ERRORS, jsonBody, jsonResponse, keyedAfter, serviceContext } from "../common";
import { Params, security, tags, webhookErrors } from "./shared";

/** A whole number in [min, max] from a query parameter, as DRF's IntegerField reads one. */
const bounded = (min: number, max: number, fallback: number, description: string) =>
  z
    .string()
    .regex(/^\s*[+-]?\d+\s*$/, { error: "A valid integer is required." })
    .transform(Number)
    .pipe(
      z
        .number()
        .min(min, { error: `Ensure this value is greater than or equal to ${min}.` })
        .max(max, { error: `Ensure this value is less than or equal to ${max}.` }),
    )
    .optional()
    .transform((value) => value ?? fallback)
    .openapi({ description, example: String(fallback) });

/** The feed's page, within its bytes (lib/list-bounds.ts): its items carry whole bodies. */
const FEED_BOUNDS = pageBounds("feed");

const FeedQuery = z.object({
  after: z.string().min(1).max(1000).optional().openapi({
    description: "A cursor from an earlier page's `next` (opaque), or `acked` for the position kept by POST …/feed/ack/. None: from the oldest delivery kept.",
    example: "acked",
  }),
  limit: bounded(
    1,
    1000,
    FEED_BOUNDS.default,
    `How many deliveries at most (1 to 1000); a page holds at most ${FEED_BOUNDS.max} (a larger limit reads as ${FEED_BOUNDS.max}), and ${FEED_BOUNDS.default} by default.`,
  ),
  wait: bounded(0, 20, 0, "Seconds to wait for the next delivery when there is none yet (0 to 20, default 0): a long poll."),
  signed: z
    .enum(["true", "false"], { error: "Must be true or false." })
    .optional()
    .transform((value) => value === "true")
    .openapi({
      description: "`true`: each delivery also carries `headers`, the headers it would be pushed with now, signed at this moment (what `listen` forwards).",
      example: "false",
    }),
});

const FeedItem = z.object({
  sequence: z.int().openapi({ example: 42 }),
  delivery_id: z.uuid().openapi({ example: "5d1c7a2e-8f3b-4c6d-9e0a-1b2c3d4e5f60" }),
  payment_id: z.string().openapi({ example: "pmt_demoPaymentSettled0001" }),
  status: z.string().openapi({ description: "pending, succeeded, failed or held.", example: "succeeded" }),
  created: z.string().openapi({ example: "2026-11-25T10:15:30.123Z" }),
  body: z.string().openapi({
    description: "Exactly the bytes that were (or will be) sent.",
    example: '{"object_type":"payment","object_id":"pmt_demoPaymentSettled0001","event":"payment.changed"}',
  }),
  cursor: z.string().openapi({
    description: "The cursor just after this delivery: acking it after handling the delivery keeps the position one delivery at a time.",
    example: "eyJzIjoi…",
  }),
  headers: z
    .record(z.string(), z.string())
    .optional()
    .openapi({
      description: "With `signed=true` only: every header it would be pushed with, signed now (`webhook-timestamp` is this moment), `authorization` included.",
      example: { "webhook-id": "5d1c7a2e-8f3b-4c6d-9e0a-1b2c3d4e5f60" },
    }),
});
const Feed = z
  .object({
    results: z.array(FeedItem),
    next: z.string().openapi({ description: "The cursor to read on from (the same position when nothing was new).", example: "eyJzIjoi…" }),
  })
  .openapi("WebhookFeed");
const FeedAck = z.object({ cursor: z.string().min(1).max(1000).openapi({ description: "A `next` from the feed.", example: "eyJzIjoi…" }) });
const GONE = {
  410: "The cursor expired (another epoch: the account moved or the database was restored; or before deliveries retention removed): resynchronise by polling /v2/payments/",
};

/** The feed (docs/interface.md, "The feed"): pull what was sent, in sequence order, and keep a position. */
export function registerFeedRoutes(router: OpenAPIHono<AppEnv>): void {
  router.openapi(
    createRoute({
      method: "get",
      path: "/{id}/feed",
      operationId: "readWebhookFeed",
      // Read at the primary, which has every cursor the feed handed out.
      middleware: [fromPrimary] as const,
      summary: "A subscription's deliveries in sequence order after a cursor",
      description:
        "Every delivery of the subscription with a sequence number (test deliveries have none), oldest first, after the cursor, each with the exact body. With `wait`, an empty answer waits up to that many seconds for the next one. A paused subscription plus the feed is a pull-only subscription: nothing is pushed, and the feed has everything.",
      tags,
      security,
      request: { params: Params, query: FeedQuery },
      responses: {
        200: jsonResponse(Feed, "The page and the cursor to go on from"),
        ...webhookErrors([400, 401, 404, 409, 410], { ...GONE, 409: "signed=true, and the subscription's secrets were sealed with another ENCRYPTION_KEY" }),
      },
    }),
    async (c) => {
      const ctx = serviceContext(c);
      const { id } = c.req.valid("param");
      const query = c.req.valid("query");
      const { items, next } = await readFeed(ctx, id, { ...query, limit: Math.min(query.limit, FEED_BOUNDS.max) });
      const headers = query.signed
        ? await signedHeaders(
            ctx,
            id,
            items.map((item) => item.row),
          )
        : null;
      const results = items.map(({ row, cursor }, index) => ({
        sequence: row.sequence!,
        delivery_id: row.id,
        payment_id: row.paymentId,
        status: row.status,
        created: toIso(row.createdAt),
        body: row.body,
        cursor,
        ...(headers ? { headers: headers[index]! } : {}),
      }));
      return c.json({ results, next }, 200);
    },
  );

  router.openapi(
    createRoute({
      method: "post",
      path: "/{id}/feed/ack",
      operationId: "ackWebhookFeed",
      summary: "Keep a position in the feed",
      description:
        "The service keeps this cursor for the subscription; `GET …/feed/?after=acked` reads on from it. It only moves forward: an older cursor leaves it where it is (the answer says where).",
      tags,
      security,
      request: { params: Params, body: jsonBody(FeedAck) },
      responses: { 200: jsonResponse(FeedAck, "The position kept"), ...webhookErrors([...BODY_ERRORS, 404, 410], GONE) },
    }),
    // It moves a position only forward, so repeating it changes nothing: its key is claimed first,
    // and its answer stored with it after.
    (c) => keyedAfter(c, async () => c.json(await ackFeed(serviceContext(c), c.req.valid("param").id, c.req.valid("json").cursor), 200)),
  );
}
