import { z } from "@hono/zod-openapi";
import { DELIVERY_STATUSES, WEBHOOK_CONTENT_TYPES } from "../../db/schema";
import { choiceFilter, createdFilters, pagingParams } from "../../lib/filters";
import { toIso } from "../../lib/time";
import type { AttemptRow, DeliveryRow } from "../../services/webhook-deliveries";
import type { Subscription } from "../../services/webhook-subscriptions";

const credential = z.string().min(1).max(190);
const fields = {
  event: z.enum(["payment.changed"]),
  url: z.string().min(1).max(190),
  content_type: z.enum(WEBHOOK_CONTENT_TYPES),
  username: credential,
  password: credential,
};
const FLAGS = ["invoice_ids", "payment_status", "payment_events", "refund_reason", "instrument_number", "all_payment_details"] as const;
const flagsWithDefaults = Object.fromEntries(FLAGS.map((flag) => [flag, z.boolean().default(false)])) as Record<(typeof FLAGS)[number], z.ZodDefault<z.ZodBoolean>>;
const optionalFlags = Object.fromEntries(FLAGS.map((flag) => [flag, z.boolean().optional()])) as Record<(typeof FLAGS)[number], z.ZodOptional<z.ZodBoolean>>;

/** POST and PUT: the whole subscription (flags default to false). */
export const SubscriptionInput = z
  .object({ ...fields, ...flagsWithDefaults, is_active: z.boolean().optional() })
  .openapi("WebhookSubscriptionInput");

/** PATCH: any subset. */
export const SubscriptionPatch = z
  .object({
    event: fields.event.optional(),
    url: fields.url.optional(),
    content_type: fields.content_type.optional(),
    username: credential.optional(),
    password: credential.optional(),
    ...optionalFlags,
    is_active: z.boolean().optional(),
  })
  .openapi("WebhookSubscriptionPatch");

export const SubscriptionSchema = z
  .object({
    id: z.string().uuid(),
    user: z.string(),
    event: z.literal("payment.changed"),
    url: z.string(),
    content_type: z.enum(WEBHOOK_CONTENT_TYPES),
    username: z.string().nullable(),
    password: z.string().nullable(),
    invoice_ids: z.boolean(),
    payment_status: z.boolean(),
    payment_events: z.boolean(),
    refund_reason: z.boolean(),
    instrument_number: z.boolean(),
    all_payment_details: z.boolean(),
    is_active: z.boolean(),
    secret: z.string().nullable().openapi({ example: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" }),
    secrets_readable: z.boolean().openapi({
      description:
        "False when the stored credentials and secret were sealed with another ENCRYPTION_KEY: username, password and secret are then null, deliveries fail with that reason, and the subscription can be read and deleted but not changed (409) until the key is restored.",
    }),
    subscription: z.string().url(),
    created_at: z.string().datetime(),
    updated_at: z.string().datetime(),
  })
  .openapi("WebhookSubscription");

export const DeliveryQuery = z.object({ status: choiceFilter(DELIVERY_STATUSES), ...createdFilters, ...pagingParams });

export const DeliverySchema = z
  .object({
    id: z.string().uuid(),
    payment_id: z.string(),
    status: z.enum(DELIVERY_STATUSES),
    attempts: z.array(
      z.object({
        number: z.number().int(),
        started_at: z.string().datetime(),
        duration_ms: z.number().int(),
        response_status: z.number().int().nullable(),
        error: z.string().nullable(),
      }),
    ),
    body: z.string().openapi({ description: "The exact bytes every attempt sends." }),
    created: z.string().datetime(),
    updated: z.string().datetime(),
    next_attempt_at: z.string().datetime().nullable(),
  })
  .openapi("WebhookDelivery");

export function subscriptionView(subscription: Subscription, origin: string) {
  return {
    id: subscription.id,
    user: subscription.user,
    event: "payment.changed" as const,
    url: subscription.url,
    content_type: subscription.contentType,
    username: subscription.revealed?.username ?? null,
    password: subscription.revealed?.password ?? null,
    invoice_ids: subscription.invoiceIds,
    payment_status: subscription.paymentStatus,
    payment_events: subscription.paymentEvents,
    refund_reason: subscription.refundReason,
    instrument_number: subscription.instrumentNumber,
    all_payment_details: subscription.allPaymentDetails,
    is_active: subscription.isActive,
    secret: subscription.revealed?.secretText ?? null,
    secrets_readable: subscription.revealed !== null,
    subscription: `${origin}/v1/webhooks/${subscription.id}/`,
    created_at: toIso(subscription.createdAt),
    updated_at: toIso(subscription.updatedAt),
  };
}

export function deliveryView({ delivery, attempts }: { delivery: DeliveryRow; attempts: AttemptRow[] }) {
  return {
    id: delivery.id,
    payment_id: delivery.paymentId,
    status: delivery.status,
    attempts: attempts.map((attempt) => ({
      number: attempt.number,
      started_at: toIso(attempt.startedAt),
      duration_ms: attempt.durationMs,
      response_status: attempt.responseStatus,
      error: attempt.error,
    })),
    body: delivery.body,
    created: toIso(delivery.createdAt),
    updated: toIso(delivery.updatedAt),
    next_attempt_at: delivery.nextAttemptAt === null ? null : toIso(delivery.nextAttemptAt),
  };
}
