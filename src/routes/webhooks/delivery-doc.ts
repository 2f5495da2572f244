import { z, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../app-env";
import { PaymentEventSchema, PaymentSchema } from "../payments/schemas";

/**
 * The `payment.changed` delivery, for the OpenAPI document's `webhooks` section: what a receiver
 * gets and how to check it. The code that builds it is src/webhooks/ (payload, signing, attempt).
 */
const PaymentChanged = z
  .object({
    object_type: z.literal("payment").openapi({ description: "Always `payment`.", example: "payment" }),
    object_id: z.string().openapi({ description: "The payment that changed.", example: "pmt_demoPaymentPending0001" }),
    event: z.literal("payment.changed").openapi({ description: "Always `payment.changed`.", example: "payment.changed" }),
    invoice_ids: z
      .array(z.string())
      .optional()
      .openapi({ description: "With the `invoice_ids` flag: the payment's invoice ids.", example: ["inv_demoInvoice0000000001"] }),
    payment_status: PaymentSchema.shape.status
      .optional()
      .openapi({ description: "With the `payment_status` flag: the status right after the change.", example: "in-progress" }),
    payment_events: z.array(PaymentEventSchema).optional().openapi({ description: "With the `payment_events` flag: every event, oldest first." }),
    refund_reason: z.string().nullable().optional().openapi({ description: "With the `refund_reason` flag.", example: null }),
    instrument_number: z.string().nullable().optional().openapi({ description: "With the `instrument_number` flag.", example: "ACH-778899" }),
    object: PaymentSchema.optional().openapi({ description: "With `all_payment_details`: the whole payment detail, and no other optional field." }),
    test: z.literal(true).optional().openapi({
      description:
        "Only on a test delivery (`POST /v1/webhooks/{id}/test/`): `true`. Its body is built as for the account's latest payment, or an example payment `pmt_test`; do not act on it as a real change.",
      example: true,
    }),
  })
  .openapi("PaymentChangedDelivery", {
    description:
      "The payment right after the change, frozen when the change is made: every retry sends the same bytes, in the content type the subscription had then.",
  });

/** An operational event (docs/interface.md, "Operational events"), for a `subscription.health` subscription. */
const HealthEvent = z
  .object({
    object_type: z.literal("subscription").openapi({ example: "subscription" }),
    object_id: z
      .uuid()
      .openapi({ description: "The subscription it is about (never the health subscription itself).", example: "0b7f2c1e-4d5a-4e8b-9c3f-2a1b0c9d8e7f" }),
    event: z
      .enum(["subscription.failing", "subscription.disabled", "subscription.recovered", "delivery.exhausted"])
      .openapi({ example: "subscription.failing" }),
    occurred_at: z.string().openapi({ description: "When the attempt behind it was recorded.", example: "2026-11-25T10:15:30.123Z" }),
    failing_since: z
      .string()
      .nullable()
      .optional()
      .openapi({ description: "`subscription.failing`: since when its attempts have failed.", example: "2026-11-25T09:10:00.000Z" }),
    reason: z.enum(["gone", "failing"]).optional().openapi({ description: "`subscription.disabled`: a 410, or 5 days of failures.", example: "gone" }),
    delivery_id: z
      .uuid()
      .optional()
      .openapi({ description: "`delivery.exhausted`: the delivery that gave up.", example: "5d1c7a2e-8f3b-4c6d-9e0a-1b2c3d4e5f60" }),
    payment_id: z.string().optional().openapi({ description: "`delivery.exhausted`: its payment.", example: "pmt_demoPaymentPending0001" }),
  })
  .openapi("SubscriptionHealthDelivery", { description: "Sent once per occurrence, in the same D1 batch as the attempt that caused it." });

const header = (description: string, example: string) => z.string().openapi({ description, example });

const DeliveryHeaders = z.object({
  authorization: header("`Basic base64(username:password)` with the subscription's credentials.", "Basic aG9vay11c2VyOmhvb2stcGFzcy01ZjJhOWM="),
  "content-type": header("The subscription's content type when the change was made.", "application/json"),
  "hook-subscription": header("The subscription's id.", "0b7f2c1e-4d5a-4e8b-9c3f-2a1b0c9d8e7f"),
  "hook-delivery": header("The delivery's id, the same on every retry: deduplicate on it.", "5d1c7a2e-8f3b-4c6d-9e0a-1b2c3d4e5f60"),
  "hook-event": header("`payment.changed`, or for a `subscription.health` subscription the operational event's name.", "payment.changed"),
  "hook-sequence": header(
    "The delivery's number in its subscription's sequence: 1, 2, 3, … in commit order, without gaps (not on a test delivery). A number that skips one means a delivery is late or lost: the feed (`GET /v1/webhooks/{id}/feed/`) has it.",
    "42",
  ).optional(),
  "hook-payment-version": header(
    "The payment's `version` the body shows (not on a test delivery): drop a delivery older than a version you have applied.",
    "3",
  ).optional(),
  "hook-hmac": header(
    "Base64 HMAC-SHA256 of the exact body bytes, keyed by the secret's key bytes (the base64-decoded text after `whsec_`). For 24 hours after a rotation it stays keyed by the old secret.",
    "p3kVmV4Y0mWc5l9Nq2bX8rJ1tA6zE7uI0oP3sD5fG9h=",
  ),
  "hook-hmac-next": header(
    "Only for 24 hours after a rotation: the same HMAC keyed by the new secret. A receiver that has switched to the new secret accepts a match with either header.",
    "Zx9cV8bN7mQ6wE5rT4yU3iO2pA1sD0fG9hJ8kL7zX6c=",
  ).optional(),
  "webhook-id": header("Standard Webhooks: the delivery's id.", "5d1c7a2e-8f3b-4c6d-9e0a-1b2c3d4e5f60"),
  "webhook-timestamp": header("Standard Webhooks: this attempt's Unix time in seconds.", "1763720130"),
  "webhook-signature": header(
    'Standard Webhooks: `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`; for 24 hours after a rotation, one per secret, space-separated. Verify with the `standardwebhooks` library and the secret.',
    "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
  ),
  "user-agent": header("The service's name and version.", "payments-webhooks/0.1.0"),
});

const RESPONSES = {
  200: { description: "Any 2xx within 15 s: delivered." },
  410: { description: "Gone: the delivery ends and the subscription is deactivated (its later deliveries are held)." },
  default: { description: "Anything else, a timeout or a network error: retried on the schedule." },
};

export function registerDeliveryDoc(app: OpenAPIHono<AppEnv>): void {
  app.openAPIRegistry.registerWebhook({
    method: "post",
    path: "payment.changed",
    operationId: "paymentChanged",
    summary: "A payment changed",
    description:
      "POSTed to each active subscription's URL when a payment is created and when each event is recorded on it (a paused one keeps them as `held`; filters may leave a change out). Form bodies (`application/x-www-form-urlencoded`) carry each top-level key as a field: string arrays as repeated keys, objects and arrays of objects as JSON text, null as an empty value. Answer 2xx within 15 s; anything else is retried after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, then every 12 h up to 3 days (±10% jitter; `Retry-After` on 429 and 503 is honoured).",
    tags: ["webhooks"],
    security: [{ subscriptionBasic: [] }],
    request: {
      headers: DeliveryHeaders,
      body: {
        required: true,
        content: {
          "application/json": { schema: PaymentChanged },
          "application/x-www-form-urlencoded": { schema: PaymentChanged },
        },
      },
    },
    responses: RESPONSES,
  });
  app.openAPIRegistry.registerWebhook({
    method: "post",
    path: "subscription.health",
    operationId: "subscriptionHealth",
    summary: "Another subscription of the account is failing, disabled or recovered, or a delivery gave up",
    description:
      'POSTed to each subscription made with `"event": "subscription.health"`, signed, retried and logged like any delivery; `hook-event` names the event. Flags and filters do not apply.',
    tags: ["webhooks"],
    security: [{ subscriptionBasic: [] }],
    request: {
      headers: DeliveryHeaders,
      body: { required: true, content: { "application/json": { schema: HealthEvent }, "application/x-www-form-urlencoded": { schema: HealthEvent } } },
    },
    responses: RESPONSES,
  });
}
