import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../../app-env";
import { errorsOf, serviceContext, type ErrorStatus } from "../common";
import { sendChallenge } from "../../webhooks";
import { parseInstant } from "../../lib/time";

export const tags = ["webhooks"];
export const security = [{ basicAuth: [] }];
const idParam = (name: string, description: string, example: string) => z.string().openapi({ param: { name, in: "path", description }, example });
export const Params = z.object({ id: idParam("id", "The subscription's id.", "0b7f2c1e-4d5a-4e8b-9c3f-2a1b0c9d8e7f") });
export const DeliveryParams = Params.extend({ delivery_id: idParam("delivery_id", "The delivery's id.", "5d1c7a2e-8f3b-4c6d-9e0a-1b2c3d4e5f60") });
export const UNREADABLE_409 = {
  409: "The subscription's secrets were sealed with another ENCRYPTION_KEY (`secrets_readable` is false); restore the key or delete it",
};
/** Every webhook route needs ENCRYPTION_KEY, so each can answer 500 "Service is not configured.". */
export const webhookErrors = (statuses: ErrorStatus[], described: Partial<Record<ErrorStatus, string>> = {}) => errorsOf([...statuses, 500], described);

export const PAUSED_409 = { 409: "The subscription is paused (`is_active` is false): resume it first" };

/** A window's bound in a body: ISO 8601, as Django REST framework words its refusal. */
export const timestamp = (description: string, example = "2026-11-20T00:00:00Z") =>
  z
    .string()
    .min(1)
    // Blank is min(1)'s message alone, as Django REST framework words it.
    .refine((text) => text === "" || parseInstant(text) !== null, { error: "Datetime has wrong format. Use ISO 8601, for example 2026-11-02T09:00:00Z." })
    .openapi({ description, example });

/** A window's start as whole milliseconds: one below the millisecond starts at the next. Pure. */
export function startMs(text: string): number {
  const start = parseInstant(text)!;
  return start.ms + (start.subMs ? 1 : 0);
}

export const origin = (c: Context<AppEnv>) => new URL(c.req.url).origin;
/** A subscription's record carries its secret and credentials: its stored idempotent answer is sealed. */
export const SEALED = { sealed: true };

/**
 * Sends a subscription's endpoint-ownership challenge after the answer (the request's waitUntil),
 * when one is due (webhooks/delivery/challenge.ts); the cron sends it should this not finish.
 */
export async function challengeLater(c: Context<AppEnv>, row: Parameters<typeof sendChallenge>[2]): Promise<void> {
  if (row.verification !== "pending") return;
  const ctx = serviceContext(c);
  const work = sendChallenge(ctx.db, ctx.queue, row, ctx.keys).catch((error) =>
    console.error(JSON.stringify({ type: "endpoint_challenge_error", subscription_id: row.id, error: String(error) })),
  );
  if (ctx.later) ctx.later(work);
  else await work;
}
