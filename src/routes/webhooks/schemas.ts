import { z } from "@hono/zod-openapi";
import {
  DEFAULT_LAG_ALERT_MS,
  DELIVERY_STATUSES,
  ORDERINGS,
  PAYMENT_METHODS,
  PAYMENT_STATUSES,
  SIGNING_SCHEMES,
  VERIFICATIONS,
  WEBHOOK_CONTENT_TYPES,
} from "../../db/schema";
import { LAG_ALERT_BOUNDS_MS } from "../../webhooks";
import { choiceFilter, createdFilters, MAX_FILTER_VALUES, pagingParams, repeatable } from "../../lib/filters";
import { toIso } from "../../lib/time";
import { notAnObject } from "../../lib/messages";
import { timestamp } from "../common";
import { ATTEMPTS_SHOWN, parseFilters, type Subscription } from "../../webhooks";

export { deliveryView } from "../../webhooks";

// RFC 7617: no control characters in either, and no colon in the user-id (it ends the user-id).
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
const credential = (description: string, example: string, { colon = true } = {}) =>
  z
    .string()
    .min(1)
    .max(190)
    .refine((text) => !CONTROL.test(text), "Control characters are not allowed.")
    .refine((text) => colon || !text.includes(":"), "A username cannot contain a colon (:): HTTP Basic ends the username there.")
    .openapi({ description: `${description} Any Unicode text without control characters, sent as UTF-8 (RFC 7617).`, example });
const fields = {
  event: z.enum(["payment.changed", "subscription.health"]).openapi({
    description:
      "`payment.changed`: every change of the account's payments (as its flags and filters shape them). `subscription.health`: what happens to the account's other subscriptions: `subscription.failing`, `subscription.disabled`, `subscription.recovered`, `delivery.exhausted`, `subscription.lagging`, `subscription.caught_up` (its flags and filters do not apply).",
    example: "payment.changed",
  }),
  url: z.string().min(1).max(190).openapi({
    description:
      "Where deliveries are POSTed: absolute, at most 190 characters, https, no user-info, no localhost or non-public address, port 443, 80 or 1024 and above (lifted by ALLOW_LOCAL_WEBHOOK_URLS for local work).",
    example: "https://erp.example.com/hooks/payments",
  }),
  content_type: z.enum(WEBHOOK_CONTENT_TYPES).openapi({ description: "How delivery bodies are encoded.", example: "application/json" }),
  signing: z.enum(SIGNING_SCHEMES).openapi({
    description:
      "How `webhook-signature` is made, chosen when the subscription is made: `hmac` (the default; `v1,…` with the shared `secret`) or `ed25519` (`v1a,…` with a key pair of the service's; verify with `public_key`, also at GET …/public-key/). `hook-hmac` is the HMAC with `secret` either way. PUT and PATCH may repeat it but not change it (400).",
    example: "hmac",
  }),
  ordering: z.enum(ORDERINGS).openapi({
    description:
      "`none` (the default): deliveries go out side by side. `per_payment`: a payment's deliveries go out one at a time in sequence order, each once every earlier one of that payment has ended (succeeded, failed, discarded or removed); other payments' deliveries are never held back by it. A change applies to deliveries made after it.",
    example: "per_payment",
  }),
  lag_alert_ms: z
    .int()
    .min(LAG_ALERT_BOUNDS_MS.min)
    .max(LAG_ALERT_BOUNDS_MS.max)
    .nullable()
    .openapi({
      description: `When the p95 lag of its last 5 minutes (from a change's commit to its delivery's first 2xx) passes this many ms, \`subscription.health\` subscriptions get \`subscription.lagging\`, and \`subscription.caught_up\` once it has stayed under it for 5 minutes. ${LAG_ALERT_BOUNDS_MS.min} to ${LAG_ALERT_BOUNDS_MS.max} (3 days); ${DEFAULT_LAG_ALERT_MS} by default; null: never.`,
      example: DEFAULT_LAG_ALERT_MS,
    }),
  username: credential("Sent as HTTP Basic with every delivery; of your choosing, not your API username; no colon.", "hook-user", { colon: false }),
  password: credential("Sent as HTTP Basic with every delivery; of your choosing, not your API password.", "hook-pass-5f2a9c"),
};
const description = z
  .string()
  .trim()
  .min(1)
  .max(190)
  .refine((text) => !CONTROL.test(text), "Control characters are not allowed.")
  .nullable()
  .openapi({
    description:
      "A name for people (the console shows it): at most 190 characters; surrounding spaces are removed; null clears it (blank is refused, as Django REST framework does).",
    example: "ERP sync (production)",
  });
const FLAG_DESCRIPTIONS = {
  invoice_ids: "Add `invoice_ids` (the payment's invoice ids) to each delivery.",
  payment_status: "Add `payment_status` to each delivery.",
  payment_events: "Add `payment_events` (every event, oldest first) to each delivery.",
  refund_reason: "Add `refund_reason` (string or null) to each delivery.",
  instrument_number: "Add `instrument_number` (string or null) to each delivery.",
  all_payment_details: "Add `object`, the whole payment detail, and no other field.",
} as const;
const FLAGS = Object.keys(FLAG_DESCRIPTIONS) as (keyof typeof FLAG_DESCRIPTIONS)[];
const flag = (name: keyof typeof FLAG_DESCRIPTIONS) => z.boolean().openapi({ description: FLAG_DESCRIPTIONS[name], example: name === "payment_status" });
const flagsWithDefaults = Object.fromEntries(FLAGS.map((name) => [name, flag(name).default(false)])) as Record<
  (typeof FLAGS)[number],
  z.ZodDefault<z.ZodBoolean>
>;
const optionalFlags = Object.fromEntries(FLAGS.map((name) => [name, flag(name).optional()])) as Record<(typeof FLAGS)[number], z.ZodOptional<z.ZodBoolean>>;
// A list holds at most as many values as a query filter takes (lib/filters.ts), and is kept
// without repeats (a value given twice counts once, as in a query).
const valueList = <T extends z.ZodType<string>>(name: string, item: T, what: string) =>
  z
    .array(item, { error: `${name}: expected a list of ${what}.` })
    .min(1, { error: `${name}: this list may not be empty.` })
    .max(MAX_FILTER_VALUES, { error: `${name}: at most ${MAX_FILTER_VALUES} values.` })
    .transform((values) => [...new Set(values)]);
const idList = (name: string) =>
  valueList(
    name,
    z
      .string()
      .min(1)
      .max(64, { error: `${name}: an id has at most 64 characters.` }),
    "ids",
  );
const choiceList = (name: string, choices: readonly [string, ...string[]]) =>
  valueList(name, z.enum(choices, { error: (issue) => `${name}: "${String(issue.input)}" is not a valid choice.` }), "choices");
const amountBound = (name: string) => z.int({ error: `${name}: a valid integer is required.` }).min(1, { error: `${name}: must be at least 1.` });
const FILTER_KEYS = "status, originating_counterparty_id, receiving_counterparty_id, payment_method, amount_cents__gte, amount_cents__lte";
/** A subscription's filters (docs/interface.md, "Filters"): each list OR within, the keys AND across. */
export const FiltersSchema = z
  .strictObject(
    {
      status: choiceList("status", PAYMENT_STATUSES).optional(),
      originating_counterparty_id: idList("originating_counterparty_id").optional(),
      receiving_counterparty_id: idList("receiving_counterparty_id").optional(),
      payment_method: choiceList("payment_method", PAYMENT_METHODS).optional(),
      amount_cents__gte: amountBound("amount_cents__gte").optional(),
      amount_cents__lte: amountBound("amount_cents__lte").optional(),
    },
    {
      error: (issue) =>
        issue.code === "unrecognized_keys" ? `Unknown filter ${issue.keys.map((key) => `"${key}"`).join(", ")}: use ${FILTER_KEYS}.` : notAnObject(issue.input),
    },
  )
  .refine((f) => Object.keys(f).length > 0, {
    error: `No filter given: name at least one of ${FILTER_KEYS}, or send null for every change.`,
    when: (payload) => payload.issues.length === 0,
  })
  .refine((f) => f.amount_cents__gte === undefined || f.amount_cents__lte === undefined || f.amount_cents__gte <= f.amount_cents__lte, {
    error: "amount_cents__gte must not be above amount_cents__lte.",
  })
  .nullable()
  .openapi("WebhookFilters", {
    description:
      'Which changes make a delivery: only those after which the payment matches. Lists are OR within (`status: ["settled", "failed"]`), keys AND across; the amount bounds are inclusive. Decided in the change\'s own D1 batch: a change filtered out makes no delivery and takes no sequence number. null (the default): every change.',
    example: { status: ["settled", "failed", "refunded"], amount_cents__gte: 100000 },
  });

const isActive = z
  .boolean()
  .openapi({ description: "Paused subscriptions get no deliveries; setting it true again also clears the failure streak.", example: true });

/** POST and PUT: the whole subscription (flags default to false). */
export const SubscriptionInput = z.object({
  ...fields,
  signing: fields.signing.optional(),
  ordering: fields.ordering.default("none"),
  lag_alert_ms: fields.lag_alert_ms.default(DEFAULT_LAG_ALERT_MS),
  description: description.default(null),
  ...flagsWithDefaults,
  is_active: isActive.optional(),
  filters: FiltersSchema.default(null),
});

/** PATCH: any subset. */
export const SubscriptionPatch = z.object({
  event: fields.event.optional(),
  url: fields.url.optional(),
  content_type: fields.content_type.optional(),
  signing: fields.signing.optional(),
  ordering: fields.ordering.optional(),
  lag_alert_ms: fields.lag_alert_ms.optional(),
  username: fields.username.optional(),
  password: fields.password.optional(),
  description: description.optional(),
  ...optionalFlags,
  is_active: isActive.optional(),
  filters: FiltersSchema.optional(),
});

export const SubscriptionSchema = z
  .object({
    id: z.uuid().openapi({ description: "The subscription's id.", example: "0b7f2c1e-4d5a-4e8b-9c3f-2a1b0c9d8e7f" }),
    user: z.string().openapi({ description: "The API user who made it.", example: "demo-client" }),
    event: fields.event,
    url: fields.url,
    content_type: fields.content_type,
    description: z.string().nullable().openapi({ description: "A name for people; null when none was given.", example: "ERP sync (production)" }),
    username: fields.username.nullable(),
    password: fields.password.nullable(),
    invoice_ids: flag("invoice_ids"),
    payment_status: flag("payment_status"),
    payment_events: flag("payment_events"),
    refund_reason: flag("refund_reason"),
    instrument_number: flag("instrument_number"),
    all_payment_details: flag("all_payment_details"),
    is_active: isActive,
    filters: FiltersSchema,
    secret: z.string().nullable().openapi({
      description:
        "The signing secret, Standard Webhooks form (`whsec_` + base64 of 32 random bytes). After a rotation, deliveries are signed with the old and the new one for 24 hours.",
      example: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
    }),
    signing: fields.signing,
    ordering: fields.ordering,
    lag_alert_ms: fields.lag_alert_ms,
    public_key: z.string().nullable().openapi({
      description: "An `ed25519` subscription's public key (`whpk_` + base64 of 32 bytes): it verifies the `v1a` signatures. Null for `hmac`.",
      example: null,
    }),
    verification: z.enum(VERIFICATIONS).openapi({
      description:
        "Whether its receiver has proven it wants its deliveries, where the account requires it (`verify_endpoints`): `pending` (challenges are sent; its deliveries are held, numbered as usual), `verified` (they go out, in sequence order), `failed` (3 days of challenges went unanswered; POST …/verify/ starts again) or `not_required`.",
      example: "not_required",
    }),
    secrets_readable: z.boolean().openapi({
      description:
        "False when the stored credentials and secret were sealed with another ENCRYPTION_KEY: username, password and secret are then null, deliveries fail with that reason, and the subscription can be read and deleted but not changed (409) until the key is restored.",
      example: true,
    }),
    subscription: z
      .url()
      .openapi({ description: "This record's address.", example: "https://payments.example.com/v1/webhooks/0b7f2c1e-4d5a-4e8b-9c3f-2a1b0c9d8e7f/" }),
    created_at: timestamp("When it was made."),
    updated_at: timestamp("When it last changed."),
  })
  .openapi("WebhookSubscription");

export const DeliveryQuery = z.object({
  ...repeatable("status", choiceFilter(DELIVERY_STATUSES, "Only deliveries in these statuses.")),
  payment_id: z.string().max(64).optional().openapi({ description: "Only the deliveries of this payment's changes.", example: "pmt_demoPaymentPending0001" }),
  ...createdFilters,
  ...pagingParams("deliveries"),
});

export const DeliverySchema = z
  .object({
    id: z
      .uuid()
      .openapi({ description: "The delivery's id: `hook-delivery` and `webhook-id` on every attempt.", example: "5d1c7a2e-8f3b-4c6d-9e0a-1b2c3d4e5f60" }),
    event: z.string().openapi({
      description: "`payment.changed`, or for a `subscription.health` subscription the operational event it tells (header `hook-event`).",
      example: "payment.changed",
    }),
    payment_id: z.string().openapi({ description: "The payment whose change made it; empty for an operational event.", example: "pmt_demoPaymentPending0001" }),
    event_id: z.string().nullable().openapi({
      description: "The payment event that change added; null for a test delivery (and for deliveries made before this field existed).",
      example: "pev_Zr3kP0aQ7mLx2bV9cN1tY4",
    }),
    sequence: z.int().nullable().openapi({
      description:
        "Its place in the subscription's sequence (1, 2, 3, … in commit order, without gaps; header `hook-sequence`): a receiver that sees n+2 before n+1 knows n+1 is late or lost. Null for a test delivery.",
      example: 42,
    }),
    payment_version: z.int().nullable().openapi({
      description:
        "The payment's `version` its body shows (header `hook-payment-version`): a receiver that has seen a higher one can drop this. Null for a test delivery.",
      example: 3,
    }),
    status: z.enum(DELIVERY_STATUSES).openapi({
      description: "`pending` until a 2xx (`succeeded`) or until retries run out, a 410, or the subscription goes away (`failed`).",
      example: "succeeded",
    }),
    attempts: z
      .array(
        z.object({
          number: z.int().openapi({ description: "1 for the first attempt.", example: 1 }),
          started_at: timestamp("When the attempt started."),
          duration_ms: z
            .int()
            .nullable()
            .openapi({ description: "How long the receiver took to answer; null while the attempt is in progress, or if it was interrupted.", example: 42 }),
          response_status: z.int().nullable().openapi({ description: "The receiver's HTTP status; null when there was no answer.", example: 200 }),
          error: z.string().nullable().openapi({
            description:
              "Why the attempt failed; null on success. `in progress` while it runs; an attempt whose worker stopped before its answer was recorded says `interrupted…` (the receiver may have received it).",
            example: null,
          }),
          response_excerpt: z.string().nullable().openapi({
            description:
              "The first 500 characters of the receiver's answer, with the credentials and secrets the attempt sent replaced by `[redacted]`; null when there was no answer.",
            example: "ok",
          }),
        }),
      )
      .openapi({
        description: `Its latest ${ATTEMPTS_SHOWN} attempts, oldest first (\`number\` counts from its first; every attempt stays in the log and goes to the archive).`,
      }),
    body: z.string().openapi({
      description: "The exact bytes every attempt sends.",
      example: '{"object_type":"payment","object_id":"pmt_demoPaymentPending0001","event":"payment.changed","payment_status":"pending"}',
    }),
    created: timestamp("When the change was made."),
    updated: timestamp("When it last changed."),
    next_attempt_at: timestamp("When the next attempt is due; null once it has ended.").nullable(),
    test: z.boolean().openapi({ description: "A test delivery (POST /v1/webhooks/{id}/test/), sent like any other.", example: false }),
    headers: z
      .record(z.string(), z.string())
      .nullable()
      .openapi({
        description: "The request headers its last recorded attempt sent, `authorization` masked; null before any attempt is recorded.",
        example: {
          authorization: "Basic ********",
          "content-type": "application/json",
          "hook-event": "payment.changed",
          "webhook-id": "5d1c7a2e-8f3b-4c6d-9e0a-1b2c3d4e5f60",
        },
      }),
    succeeded_at: timestamp("Its first 2xx; null until then.").nullable(),
    lag_ms: z.int().nullable().openapi({
      description: "From `created` (the change's commit) to `succeeded_at`: the lag its receiver saw. Null until it succeeds.",
      example: 182,
    }),
    trace_id: z.string().nullable().openapi({
      description:
        "The W3C trace id every attempt sends in `traceparent` (with a span id of its own): the write's, when it carried a valid `traceparent`, else a new one. Null for deliveries made before traces were kept.",
      example: "4bf92f3577b34da6a3ce929d0e0e4736",
    }),
    replay_id: z.string().nullable().openapi({
      description:
        "The replay that made it (POST …/replay/): it sends the original delivery again, as its `webhook-id`, `hook-sequence` and `hook-payment-version`, with `hook-replay`; its `lag_ms` is null. Null for every other delivery.",
      example: null,
    }),
  })
  .openapi("WebhookDelivery");

export function subscriptionView(subscription: Subscription, origin: string) {
  return {
    id: subscription.id,
    user: subscription.user,
    event: subscription.event as "payment.changed" | "subscription.health",
    url: subscription.url,
    content_type: subscription.contentType,
    description: subscription.description,
    username: subscription.revealed?.username ?? null,
    password: subscription.revealed?.password ?? null,
    invoice_ids: subscription.invoiceIds,
    payment_status: subscription.paymentStatus,
    payment_events: subscription.paymentEvents,
    refund_reason: subscription.refundReason,
    instrument_number: subscription.instrumentNumber,
    all_payment_details: subscription.allPaymentDetails,
    is_active: subscription.isActive,
    filters: parseFilters(subscription.filters),
    secret: subscription.revealed?.secretText ?? null,
    signing: subscription.signing,
    ordering: subscription.ordering,
    lag_alert_ms: subscription.lagAlertMs,
    public_key: subscription.publicKey,
    verification: subscription.verification,
    secrets_readable: subscription.revealed !== null,
    subscription: `${origin}/v1/webhooks/${subscription.id}/`,
    created_at: toIso(subscription.createdAt),
    updated_at: toIso(subscription.updatedAt),
  };
}
