import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import type { SQL } from "drizzle-orm";
import type { AppEnv } from "../../app-env";
import { parseInstant } from "../../lib/time";
import { latestPayment } from "../../services/payments";
import {
  discardHeld,
  DISCARDED_AT_ONCE,
  MAX_RECOVERED,
  recoverDeliveries,
  sendTestDelivery,
  subscriptionStats,
  WINDOWS,
  type StatsWindow,
} from "../../webhooks";
import { BODY_ERRORS, jsonBody, jsonResponse, answerOf, claimFirst, keyed, serviceContext } from "../common";
import { DeliverySchema, deliveryView } from "./schemas";
import { Params, PAUSED_409, security, startMs, tags, timestamp, webhookErrors } from "./shared";

const RecoverInput = z.object({
  since: timestamp("Recover the failed deliveries created at or after this instant."),
  until: timestamp("…and at or before this one; defaults to now. The window spans at most 14 days.").optional(),
});

const Recovered = z
  .object({
    recovered: z.int().openapi({
      description: `How many failed deliveries went back to pending (at most ${MAX_RECOVERED.toLocaleString("en")} a call; call again for more).`,
      example: 42,
    }),
  })
  .openapi("WebhookRecovered");

const time = (description: string) => z.string().nullable().openapi({ description, example: "2026-11-22T10:00:00.000Z" });
const Stats = z
  .object({
    window: z.enum(Object.keys(WINDOWS) as [StatsWindow, ...StatsWindow[]]).openapi({ example: "24h" }),
    attempts: z.int().openapi({ description: "Attempts made in the window.", example: 120 }),
    succeeded: z.int().openapi({ description: "…that succeeded.", example: 114 }),
    failed: z.int().openapi({ description: "…that failed and ended their delivery (retries ran out, or a 410).", example: 1 }),
    pending: z.int().openapi({ description: "…that failed and left their delivery pending, to be retried.", example: 5 }),
    success_rate: z.number().nullable().openapi({ description: "succeeded / attempts, or null without attempts.", example: 0.95 }),
    p50_duration_ms: z
      .int()
      .nullable()
      .openapi({ description: "Median attempt duration, from a histogram (interpolated in its bin); null without attempts.", example: 38 }),
    p95_duration_ms: z.int().nullable().openapi({ description: "95th percentile, likewise.", example: 240 }),
    p50_lag_ms: z.int().nullable().openapi({
      description:
        "Median lag of the deliveries that succeeded in the window: from the change's commit (the delivery's `created`) to its first 2xx, as a receiver feels it; from a histogram whose bins are 18% wide, so within 9% (give or take a millisecond). Null when none succeeded.",
      example: 180,
    }),
    p95_lag_ms: z.int().nullable().openapi({ description: "95th percentile, likewise.", example: 950 }),
    p99_lag_ms: z.int().nullable().openapi({ description: "99th percentile, likewise.", example: 5200 }),
    series: z
      .array(
        z.object({
          start: z.string().openapi({ description: "When the step starts.", example: "2026-11-22T10:00:00.000Z" }),
          attempts: z.int().openapi({ example: 5 }),
          succeeded: z.int().openapi({ example: 5 }),
          failed: z.int().openapi({ example: 0 }),
          pending: z.int().openapi({ example: 0 }),
          p95_lag_ms: z.int().nullable().openapi({ description: "The step's p95 lag; null when nothing succeeded in it.", example: 420 }),
        }),
      )
      .openapi({
        description: "The window's attempts over time, oldest first: per 5 minutes for 1h, per hour for 24h, per 6 hours for 7d (zeros included), for a chart.",
      }),
    last_attempt_at: time("When the latest attempt started, whatever the window; null if none."),
    last_success_at: time("When the latest successful attempt started; null if none."),
    failing_since: time("Since when every attempt has failed; null while healthy."),
    is_active: z.boolean().openapi({ example: true }),
    held: z
      .int()
      .openapi({ description: "Deliveries it holds now (made while it was paused or deactivated; nothing is attempted until it is resumed).", example: 0 }),
    waiting_for_order: z.int().openapi({
      description: "Pending deliveries of a `per_payment` subscription waiting for an earlier delivery of their payment to end.",
      example: 0,
    }),
    in_flight: z
      .int()
      .openapi({ description: "Attempts under way now, across every consumer; at most 100 (10 while its receiver keeps timing out).", example: 3 }),
    backoff_until: time(
      "While its receiver times out more than it answers, nothing more is attempted until this moment (its deliveries wait, in order); null when not backed off.",
    ),
  })
  .openapi("WebhookStats");

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** Test deliveries, recovery of failed deliveries over a window, and health (docs/interface.md, "Test delivery", "Recover" and "Stats"). */
export function registerRecoveryRoutes(router: OpenAPIHono<AppEnv>): void {
  router.openapi(
    createRoute({
      method: "post",
      path: "/{id}/test",
      operationId: "testWebhook",
      summary: "Send a test delivery",
      description:
        "A `payment.changed` delivery built as for the account's most recent payment (or an example payment `pmt_test` when it has none), shaped by the subscription's flags and content type, with `\"test\": true` added. Signed, retried and logged like any other; `test` is true in the log.",
      tags,
      security,
      request: { params: Params },
      responses: { 202: jsonResponse(DeliverySchema, "The test delivery, queued"), ...webhookErrors([401, 404, 409], PAUSED_409) },
    }),
    async (c) => {
      const ctx = serviceContext(c);
      const sent =
        (await claimFirst(c)) ??
        (await sendTestDelivery(ctx, c.req.valid("param").id, await latestPayment(ctx), keyed(c, 202, deliveryView, { claimed: true })));
      return answerOf(c, sent, (delivery) => c.json(deliveryView(delivery), 202));
    },
  );

  router.openapi(
    createRoute({
      method: "post",
      path: "/{id}/recover",
      operationId: "recoverWebhookDeliveries",
      summary: "Send failed deliveries again",
      description: `Every \`failed\` delivery of the subscription created in [since, until] goes back to \`pending\` with the same id and body and a fresh retry schedule, oldest first, at most ${MAX_RECOVERED.toLocaleString("en")} a call.`,
      tags,
      security,
      request: { params: Params, body: jsonBody(RecoverInput) },
      responses: { 202: jsonResponse(Recovered, "How many were recovered"), ...webhookErrors([...BODY_ERRORS, 404, 409], PAUSED_409) },
    }),
    async (c) => {
      const { since, until } = c.req.valid("json");
      const window = { since: startMs(since), until: until ? parseInstant(until)!.ms : Date.now() };
      const recovered =
        (await claimFirst(c)) ??
        (await recoverDeliveries(
          serviceContext(c),
          c.req.valid("param").id,
          window,
          keyed(c, 202, (body: SQL) => body, { claimed: true }),
        ));
      return answerOf(c, recovered, (result) => c.json(result, 202));
    },
  );

  router.openapi(
    createRoute({
      method: "post",
      path: "/{id}/held/discard",
      operationId: "discardHeldWebhookDeliveries",
      summary: "Drop a paused subscription's held deliveries",
      description: `A paused or deactivated subscription keeps a \`held\` delivery for every change (nothing is attempted); resuming it sends them, oldest sequence first. This drops them instead, oldest first, at most ${DISCARDED_AT_ONCE} a call (call again while it answers that many). Its sequence goes on past them.`,
      tags,
      security,
      request: { params: Params },
      responses: {
        202: jsonResponse(z.object({ discarded: z.int().openapi({ example: 12 }) }).openapi("Discarded"), "How many were dropped"),
        ...webhookErrors([401, 404, 409], { 409: "The subscription is active: it holds nothing" }),
      },
    }),
    async (c) => {
      const discarded =
        (await claimFirst(c)) ??
        (await discardHeld(
          serviceContext(c),
          c.req.valid("param").id,
          keyed(c, 202, (body: SQL) => body, { claimed: true }),
        ));
      return answerOf(c, discarded, (result) => c.json(result, 202));
    },
  );

  router.openapi(
    createRoute({
      method: "get",
      path: "/{id}/stats",
      operationId: "getWebhookStats",
      summary: "A subscription's health",
      description:
        "Its attempts over the window, by the state they left their delivery in, with the success rate and duration percentiles. Counted as attempts are recorded, in 5-minute buckets (the window covers the bucket it starts in), so reading it costs the same at any history size.",
      tags,
      security,
      request: {
        params: Params,
        query: z.object({
          window: z
            .enum(Object.keys(WINDOWS) as [StatsWindow, ...StatsWindow[]])
            .default("24h")
            .openapi({ description: "1h, 24h (the default) or 7d.", example: "24h" }),
        }),
      },
      responses: { 200: jsonResponse(Stats, "The subscription's health"), ...webhookErrors([400, 401, 404]) },
    }),
    async (c) => {
      const stats = await subscriptionStats(serviceContext(c), c.req.valid("param").id, c.req.valid("query").window);
      const { lastAttemptAt, lastSuccessAt, failingSince, isActive, backoffUntil, inFlight, held, waitingForOrder, series, ...counts } = stats;
      return c.json(
        {
          ...counts,
          series: series.map(({ start, ...point }) => ({ start: iso(start)!, ...point })),
          last_attempt_at: iso(lastAttemptAt),
          last_success_at: iso(lastSuccessAt),
          failing_since: iso(failingSince),
          is_active: isActive,
          held,
          waiting_for_order: waitingForOrder,
          in_flight: inFlight,
          backoff_until: iso(backoffUntil),
        },
        200,
      );
    },
  );
}
