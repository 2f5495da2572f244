import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../app-env";
import { pagingParams } from "../../lib/filters";
import { parseInstant, toIso } from "../../lib/time";
import { cancelReplay, getReplay, listReplays, MAX_REPLAY_DAYS, MAX_REPLAY_PAYMENTS, startReplay, type ReplayRow } from "../../webhooks";
import { BODY_ERRORS, envelope, INVALID_PAGE, jsonBody, jsonResponse, keyedAfter, listEnvelope, pageRequest, serviceContext } from "../common";
import { Params, PAUSED_409, security, startMs, tags, timestamp, webhookErrors } from "./shared";

/** A payment id as the service makes them (letters, digits, `_` and `-`), 64 characters at most. */
const PAYMENT_ID = /^[A-Za-z0-9_-]{1,64}$/;

const ReplayInput = z.object({
  since: timestamp("Replay the deliveries created at or after this instant.", "2026-01-01T00:00:00Z"),
  until: timestamp(`…and at or before this one; defaults to now. The window spans at most ${MAX_REPLAY_DAYS} days and is not in the future.`).optional(),
  payment_id: z
    .array(z.string().regex(PAYMENT_ID, { error: "Enter a valid payment id." }))
    .optional()
    .openapi({ description: `Only these payments' deliveries: at most ${MAX_REPLAY_PAYMENTS} ids.`, example: ["pmt_3fZq8K2mN7pR4sT6vW9xY1"] }),
  dry_run: z.boolean().optional().openapi({ description: "Only count what it would send (200 `{count}`); nothing is sent.", example: false }),
});

const ReplaySchema = z
  .object({
    id: z.string().openapi({ example: "rpl_8Hq2Lm4Np6Rs8Tv0Wx2Yz4" }),
    status: z
      .enum(["running", "done", "canceled"])
      .openapi({ description: "`running` until every delivery is handed to the queue, then `done`; or `canceled`.", example: "running" }),
    count: z.int().openapi({ description: "How many deliveries it sends: counted when it starts, exact once it is done.", example: 30000 }),
    sent: z.int().openapi({ description: "How many it has handed to the queue so far, in sequence order.", example: 1200 }),
    since: z.string().openapi({ example: "2026-01-01T00:00:00.000Z" }),
    until: z.string().openapi({ example: "2026-11-28T00:00:00.000Z" }),
    payment_id: z.array(z.string()).nullable().openapi({ description: "The payments it is limited to; null for all.", example: null }),
    created: z.string().openapi({ example: "2026-11-28T10:00:00.000Z" }),
  })
  .openapi("WebhookReplay");

const ReplayParams = Params.extend({
  replay_id: z.string().openapi({ param: { name: "replay_id", in: "path", description: "The replay's id." }, example: "rpl_8Hq2Lm4Np6Rs8Tv0Wx2Yz4" }),
});

function replayView(replay: ReplayRow) {
  return {
    id: replay.id,
    status: replay.status,
    count: replay.count,
    sent: replay.sent,
    since: toIso(replay.since),
    until: toIso(replay.until),
    payment_id: replay.paymentIds === null ? null : (JSON.parse(replay.paymentIds) as string[]),
    created: toIso(replay.createdAt),
  };
}

/** Replay of a window from the log and the archive (docs/interface.md, "Replay"). */
export function registerReplayRoutes(router: OpenAPIHono<AppEnv>): void {
  router.openapi(
    createRoute({
      method: "post",
      path: "/{id}/replay",
      operationId: "replayWebhook",
      summary: "Replay a window of deliveries",
      description:
        "Sends again every delivery of the subscription created in [since, until], whether still in the log or only in the archive: each once, in sequence order, with the original's body bytes, `webhook-id`, `hook-sequence` and `hook-payment-version`, signed when sent, plus `hook-replay`. Test deliveries and earlier replays are not replayed. `dry_run` only counts them (200).",
      tags,
      security,
      request: { params: Params, body: jsonBody(ReplayInput) },
      responses: {
        200: jsonResponse(z.object({ count: z.int().openapi({ example: 30000 }) }).openapi("WebhookReplayCount"), "The dry run's count"),
        202: jsonResponse(ReplaySchema, "The replay, started"),
        ...webhookErrors([...BODY_ERRORS, 404, 409], PAUSED_409),
      },
    }),
    (c) =>
      keyedAfter(c, async () => {
        const { since, until, payment_id, dry_run } = c.req.valid("json");
        const ask = { since: startMs(since), until: until ? parseInstant(until)!.ms : undefined, paymentIds: payment_id };
        const started = await startReplay(serviceContext(c), c.req.valid("param").id, ask, dry_run === true);
        return "id" in started ? c.json(replayView(started), 202) : c.json({ count: started.count }, 200);
      }),
  );

  router.openapi(
    createRoute({
      method: "get",
      path: "/{id}/replays",
      operationId: "listWebhookReplays",
      summary: "List a subscription's replays",
      description: "Newest first.",
      tags,
      security,
      request: { params: Params, query: z.object(pagingParams("replays")) },
      responses: {
        200: jsonResponse(listEnvelope(ReplaySchema, "WebhookReplayList"), "Newest first"),
        ...webhookErrors([401, 404], INVALID_PAGE),
      },
    }),
    async (c) => {
      const page = await listReplays(serviceContext(c), c.req.valid("param").id, pageRequest(c, "replays"));
      return c.json(envelope(c, page, page.results.map(replayView)), 200);
    },
  );

  const oneReplay = (method: "get" | "delete", operationId: string, summary: string, description: string) =>
    createRoute({
      method,
      path: "/{id}/replays/{replay_id}",
      operationId,
      summary,
      description,
      tags,
      security,
      request: { params: ReplayParams },
      responses: { 200: jsonResponse(ReplaySchema, "The replay"), ...webhookErrors([401, 404]) },
    });
  router.openapi(oneReplay("get", "getWebhookReplay", "A replay", "Its status and progress: `sent` of `count`."), async (c) => {
    const { id, replay_id } = c.req.valid("param");
    return c.json(replayView(await getReplay(serviceContext(c), id, replay_id)), 200);
  });
  router.openapi(
    oneReplay(
      "delete",
      "cancelWebhookReplay",
      "Cancel a replay",
      "Stops a running replay: nothing more is sent, and its deliveries not yet attempted end unattempted. Answers the replay as it is after (one already done or canceled, as it is).",
    ),
    async (c) => {
      const { id, replay_id } = c.req.valid("param");
      return c.json(replayView(await cancelReplay(serviceContext(c), id, replay_id)), 200);
    },
  );
}
