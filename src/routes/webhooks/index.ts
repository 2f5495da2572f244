import { withInLookups } from "../../lib/filters";
import { createRoute, z } from "@hono/zod-openapi";
import { requireEncryptionKey } from "../../lib/encryption";
import { pagingParams } from "../../lib/filters";
import { getDelivery, listDeliveries, MAX_SUBSCRIPTIONS, redeliver, TOO_MANY_SUBSCRIPTIONS } from "../../webhooks";
import {
  createSubscription,
  deleteSubscription,
  getSubscription,
  listSubscriptions,
  rotateSubscriptionSecret,
  publicKeys,
  publishKeys,
  unpublishKeys,
  updateSubscription,
  type Subscription,
  NOT_REQUIRED,
  verifyNow,
} from "../../webhooks";
import { toIso } from "../../lib/time";
import {
  BODY_ERRORS,
  createRouter,
  envelope,
  INVALID_PAGE,
  jsonBody,
  jsonResponse,
  answerOf,
  claimFirst,
  keyed,
  keyedAfter,
  listEnvelope,
  pageRequest,
  serviceContext,
} from "../common";
import { challengeLater, DeliveryParams, origin, Params, SEALED, security, tags, UNREADABLE_409, webhookErrors } from "./shared";
import { registerArchiveRoutes } from "./archive";
import { registerReplayRoutes } from "./replays";
import { registerFilterRoutes } from "./filters";
import { registerFeedRoutes } from "./feed";
import { registerRecoveryRoutes } from "./recovery";
import { DeliveryQuery, DeliverySchema, deliveryView, SubscriptionInput, SubscriptionPatch, SubscriptionSchema, subscriptionView } from "./schemas";

export const webhooksRouter = createRouter();

// Subscriptions hold encrypted secrets: without a usable key these routes answer 500, clearly.
webhooksRouter.use("*", async (c, next) => {
  requireEncryptionKey(c.env.ENCRYPTION_KEY);
  return next();
});

webhooksRouter.openapi(
  createRoute({
    method: "post",
    path: "/",
    operationId: "createWebhook",
    summary: "Subscribe to payment.changed",
    description: `Every later payment change of the account is delivered to \`url\`, signed with the generated \`secret\`. An account has at most ${MAX_SUBSCRIPTIONS} subscriptions (409 past it).`,
    tags,
    security,
    request: { body: jsonBody(SubscriptionInput) },
    responses: { 201: jsonResponse(SubscriptionSchema, "Subscribed"), ...webhookErrors([...BODY_ERRORS, 409], { 409: TOO_MANY_SUBSCRIPTIONS }) },
  }),
  async (c) => {
    const input = c.req.valid("json");
    const id = crypto.randomUUID();
    // Published before it is made (public-keys.ts): its JWK Set is found from its first delivery on.
    if (input.signing === "ed25519") await publishKeys(c.get("directory"), c.get("caller").accountId, id, Date.now());
    const made = await createSubscription(
      serviceContext(c),
      input,
      keyed(c, 201, (s: Subscription) => subscriptionView(s, origin(c)), SEALED),
      id,
    );
    if ("ran" in made) await challengeLater(c, made.ran);
    return answerOf(c, made, (subscription) => c.json(subscriptionView(subscription, origin(c)), 201));
  },
);

webhooksRouter.openapi(
  createRoute({
    method: "get",
    path: "/",
    operationId: "listWebhooks",
    summary: "List webhook subscriptions",
    tags,
    security,
    request: { query: z.object(pagingParams("subscriptions")) },
    responses: {
      200: jsonResponse(listEnvelope(SubscriptionSchema, "WebhookSubscriptionList"), "The account's subscriptions"),
      ...webhookErrors([401, 404], INVALID_PAGE),
    },
  }),
  async (c) => {
    const page = await listSubscriptions(serviceContext(c), pageRequest(c, "subscriptions"));
    return c.json(
      envelope(
        c,
        page,
        page.results.map((subscription) => subscriptionView(subscription, origin(c))),
      ),
      200,
    );
  },
);

webhooksRouter.openapi(
  createRoute({
    method: "get",
    path: "/{id}",
    operationId: "getWebhook",
    summary: "Get a webhook subscription",
    tags,
    security,
    request: { params: Params },
    responses: { 200: jsonResponse(SubscriptionSchema, "The subscription"), ...webhookErrors([401, 404]) },
  }),
  async (c) => {
    const subscription = await getSubscription(serviceContext(c), c.req.valid("param").id);
    return c.json(subscriptionView(subscription, origin(c)), 200);
  },
);

for (const [method, schema] of [
  ["patch", SubscriptionPatch],
  ["put", SubscriptionInput],
] as const) {
  webhooksRouter.openapi(
    createRoute({
      method,
      path: "/{id}",
      operationId: method === "put" ? "replaceWebhook" : "updateWebhook",
      summary: method === "put" ? "Replace a webhook subscription" : "Change a webhook subscription",
      description: method === "put" ? "Every field is set; flags left out are false." : "Only the fields sent change.",
      tags,
      security,
      request: { params: Params, body: jsonBody(schema) },
      responses: {
        200: jsonResponse(SubscriptionSchema, method === "put" ? "Replaced" : "Updated"),
        ...webhookErrors([...BODY_ERRORS, 404, 409], UNREADABLE_409),
      },
    }),
    async (c) => {
      const subscription = await updateSubscription(serviceContext(c), c.req.valid("param").id, c.req.valid("json"));
      await challengeLater(c, subscription);
      return c.json(subscriptionView(subscription, origin(c)), 200);
    },
  );
}

webhooksRouter.openapi(
  createRoute({
    method: "delete",
    path: "/{id}",
    operationId: "deleteWebhook",
    summary: "Delete a webhook subscription",
    description: "Its delivery log goes with it, and its pending deliveries are dropped.",
    tags,
    security,
    request: { params: Params },
    responses: { 204: { description: "Deleted, with its pending deliveries" }, ...webhookErrors([401, 404]) },
  }),
  async (c) => {
    const id = c.req.valid("param").id;
    await deleteSubscription(serviceContext(c), id);
    await unpublishKeys(c.get("directory"), c.get("caller").accountId, id);
    return c.body(null, 204);
  },
);

webhooksRouter.openapi(
  createRoute({
    method: "post",
    path: "/{id}/rotate-secret",
    operationId: "rotateWebhookSecret",
    summary: "Rotate the signing secret",
    description:
      "Makes a new signing secret (and for an `ed25519` subscription a new key pair: for 24 hours `webhook-signature` carries a `v1a` signature with each pair, and GET …/public-key/ lists both public keys). For 24 hours after, `webhook-signature` carries a signature with each secret, `hook-hmac` stays keyed by the old secret and `hook-hmac-next` carries the HMAC keyed by the new one; then `hook-hmac` is keyed by the new secret and `hook-hmac-next` is gone. A receiver that has not switched keeps verifying; one that has switched accepts a match with either `hook-hmac` or `hook-hmac-next`.",
    tags,
    security,
    request: { params: Params },
    responses: { 200: jsonResponse(SubscriptionSchema, "The subscription with its new secret"), ...webhookErrors([401, 404, 409], UNREADABLE_409) },
  }),
  async (c) => {
    const rotated =
      (await claimFirst(c)) ??
      (await rotateSubscriptionSecret(
        serviceContext(c),
        c.req.valid("param").id,
        keyed(c, 200, (s: Subscription) => subscriptionView(s, origin(c)), { ...SEALED, claimed: true }),
      ));
    return answerOf(c, rotated, (subscription) => c.json(subscriptionView(subscription, origin(c)), 200));
  },
);

webhooksRouter.openapi(
  createRoute({
    method: "post",
    path: "/{id}/verify",
    operationId: "verifyWebhookEndpoint",
    summary: "Send an endpoint-ownership challenge now",
    description:
      'Where the account requires proof of endpoint ownership (`verify_endpoints`): sends the subscription\'s signed challenge at once (`{"type": "webhook.verification", "challenge"}`, answered by a 2xx with `{"challenge"}`: the same); a `failed` subscription starts 3 new days of challenges. A `verified` one is answered as it is. 409 where no proof is required.',
    tags,
    security,
    request: { params: Params },
    responses: {
      202: jsonResponse(SubscriptionSchema, "The subscription; its challenge is on its way"),
      ...webhookErrors([401, 404, 409], { 409: NOT_REQUIRED }),
    },
  }),
  (c) =>
    keyedAfter(c, async () => {
      const ctx = serviceContext(c);
      const id = c.req.valid("param").id;
      await challengeLater(c, await verifyNow(ctx.db, ctx.accountId, id));
      return c.json(subscriptionView(await getSubscription(ctx, id), origin(c)), 202);
    }),
);

webhooksRouter.openapi(
  createRoute({
    method: "get",
    path: "/{id}/deliveries",
    operationId: "listWebhookDeliveries",
    summary: "List a subscription's deliveries",
    description: "The delivery log, newest first; filter by `status` and `created` bounds.",
    tags,
    security,
    request: { params: Params, query: DeliveryQuery },
    responses: {
      200: jsonResponse(listEnvelope(DeliverySchema, "WebhookDeliveryList"), "Newest first"),
      ...webhookErrors([400, 401, 404], { 404: "No such subscription, or `Invalid page.`" }),
    },
  }),
  async (c) => {
    const { page: _page, page_size: _size, cursor: _cursor, ...filters } = withInLookups(c.req.valid("query"));
    const page = await listDeliveries(serviceContext(c), c.req.valid("param").id, filters, pageRequest(c, "deliveries"));
    return c.json(envelope(c, page, page.results.map(deliveryView)), 200);
  },
);

webhooksRouter.openapi(
  createRoute({
    method: "get",
    path: "/{id}/deliveries/{delivery_id}",
    operationId: "getWebhookDelivery",
    summary: "Get a delivery with its attempts",
    tags,
    security,
    request: { params: DeliveryParams },
    responses: { 200: jsonResponse(DeliverySchema, "The delivery and its attempts"), ...webhookErrors([401, 404]) },
  }),
  async (c) => {
    const { id, delivery_id } = c.req.valid("param");
    return c.json(deliveryView(await getDelivery(serviceContext(c), id, delivery_id)), 200);
  },
);

webhooksRouter.openapi(
  createRoute({
    method: "post",
    path: "/{id}/deliveries/{delivery_id}/redeliver",
    operationId: "redeliverWebhookDelivery",
    summary: "Send a delivery again",
    description: "A new attempt with the same delivery id and body, whatever the delivery's status; its retry schedule starts again.",
    tags,
    security,
    request: { params: DeliveryParams },
    responses: { 202: jsonResponse(DeliverySchema, "A new attempt is queued"), ...webhookErrors([401, 404]) },
  }),
  async (c) => {
    const { id, delivery_id } = c.req.valid("param");
    const sent = (await claimFirst(c)) ?? (await redeliver(serviceContext(c), id, delivery_id, keyed(c, 202, deliveryView, { claimed: true })));
    return answerOf(c, sent, (delivery) => c.json(deliveryView(delivery), 202));
  },
);

registerRecoveryRoutes(webhooksRouter);
registerFilterRoutes(webhooksRouter);
registerFeedRoutes(webhooksRouter);
registerArchiveRoutes(webhooksRouter);
registerReplayRoutes(webhooksRouter);

const PublicKeys = z
  .object({
    public_key: z.string().openapi({
      description: "Verifies the `v1a` signatures (`whpk_` + base64 of the 32-byte Ed25519 public key).",
      example: "whpk_Zf8bq1o2G0m3y6x1m0e8f9gRk3hD1eYbqz9d7Cq5s2o=",
    }),
    previous_public_key: z
      .string()
      .nullable()
      .openapi({ description: "The key before the last rotation, for its 24 hours (deliveries carry a signature with each); null otherwise.", example: null }),
    previous_expires_at: z.string().nullable().openapi({ description: "When the previous key stops signing; null when there is none.", example: null }),
  })
  .openapi("WebhookPublicKeys");

webhooksRouter.openapi(
  createRoute({
    method: "get",
    path: "/{id}/public-key",
    operationId: "getWebhookPublicKey",
    summary: "An Ed25519 subscription's public key",
    description:
      "For a subscription made with `signing: ed25519`: the key that verifies its `v1a` signatures (Standard Webhooks), and during a rotation's 24 hours the previous one too. 404 for an `hmac` subscription.",
    tags,
    security,
    request: { params: Params },
    responses: {
      200: jsonResponse(PublicKeys, "The public keys"),
      ...webhookErrors([401, 404], {
        404: "No such subscription in this account, or it signs with HMAC (`signing: hmac`), which has no public key: the detail says which",
      }),
    },
  }),
  async (c) => {
    const keys = await publicKeys(serviceContext(c), c.req.valid("param").id);
    return c.json(
      {
        public_key: keys.publicKey,
        previous_public_key: keys.previousPublicKey,
        previous_expires_at: keys.previousExpiresAt === null ? null : toIso(keys.previousExpiresAt),
      },
      200,
    );
  },
);
