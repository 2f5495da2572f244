import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../../env";
import { requireEncryptionKey } from "../../lib/encryption";
import { getDelivery, listDeliveries, redeliver } from "../../services/webhook-deliveries";
import {
  createSubscription,
  deleteSubscription,
  getSubscription,
  listSubscriptions,
  rotateSubscriptionSecret,
  updateSubscription,
  type Keys,
} from "../../services/webhook-subscriptions";
import { createRouter, envelope, ErrorSchema, errorResponses, jsonBody, jsonResponse, listEnvelope, pageRequest } from "../common";
import { DeliveryQuery, DeliverySchema, deliveryView, SubscriptionInput, SubscriptionPatch, SubscriptionSchema, subscriptionView } from "./schemas";

const tags = ["webhooks"];
const security = [{ basicAuth: [] }];
const idParam = (name: string) => z.string().openapi({ param: { name, in: "path" } });
const Params = z.object({ id: idParam("id") });
const DeliveryParams = z.object({ id: idParam("id"), delivery_id: idParam("delivery_id") });
const misconfigured = { 500: jsonResponse(ErrorSchema, "ENCRYPTION_KEY is missing or malformed") };

const keys = (c: Context<AppEnv>): Keys => ({
  encryptionKey: c.env.ENCRYPTION_KEY,
  allowLocalUrls: c.env.ALLOW_LOCAL_WEBHOOK_URLS === "true",
});
const origin = (c: Context<AppEnv>) => new URL(c.req.url).origin;

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
    tags,
    security,
    request: { body: jsonBody(SubscriptionInput) },
    responses: { 201: jsonResponse(SubscriptionSchema, "Subscribed"), ...errorResponses, ...misconfigured },
  }),
  async (c) => {
    const subscription = await createSubscription(c.get("db"), c.get("caller"), c.req.valid("json"), keys(c));
    return c.json(subscriptionView(subscription, origin(c)), 201);
  },
);

webhooksRouter.openapi(
  createRoute({
    method: "get",
    path: "/",
    tags,
    security,
    request: { query: z.object({}) },
    responses: { 200: jsonResponse(listEnvelope(SubscriptionSchema, "WebhookSubscriptionList"), "The account's subscriptions"), ...errorResponses },
  }),
  async (c) => {
    const page = await listSubscriptions(c.get("db"), c.get("caller").accountId, pageRequest(c), keys(c));
    return c.json(envelope(c, page, page.results.map((subscription) => subscriptionView(subscription, origin(c)))), 200);
  },
);

webhooksRouter.openapi(
  createRoute({
    method: "get",
    path: "/{id}",
    tags,
    security,
    request: { params: Params },
    responses: { 200: jsonResponse(SubscriptionSchema, "The subscription"), ...errorResponses },
  }),
  async (c) => {
    const subscription = await getSubscription(c.get("db"), c.get("caller").accountId, c.req.valid("param").id, keys(c));
    return c.json(subscriptionView(subscription, origin(c)), 200);
  },
);

for (const [method, schema] of [["patch", SubscriptionPatch], ["put", SubscriptionInput]] as const) {
  webhooksRouter.openapi(
    createRoute({
      method,
      path: "/{id}",
      tags,
      security,
      request: { params: Params, body: jsonBody(schema) },
      responses: { 200: jsonResponse(SubscriptionSchema, method === "put" ? "Replaced" : "Updated"), ...errorResponses },
    }),
    async (c) => {
      const subscription = await updateSubscription(c.get("db"), c.get("caller"), c.req.valid("param").id, c.req.valid("json"), keys(c));
      return c.json(subscriptionView(subscription, origin(c)), 200);
    },
  );
}

webhooksRouter.openapi(
  createRoute({
    method: "delete",
    path: "/{id}",
    tags,
    security,
    request: { params: Params },
    responses: { 204: { description: "Deleted, with its pending deliveries" }, ...errorResponses },
  }),
  async (c) => {
    await deleteSubscription(c.get("db"), c.get("caller").accountId, c.req.valid("param").id);
    return c.body(null, 204);
  },
);

webhooksRouter.openapi(
  createRoute({
    method: "post",
    path: "/{id}/rotate-secret",
    tags,
    security,
    description: "A new signing secret; for 24 hours deliveries are signed with both.",
    request: { params: Params },
    responses: { 200: jsonResponse(SubscriptionSchema, "The subscription with its new secret"), ...errorResponses },
  }),
  async (c) => {
    const subscription = await rotateSubscriptionSecret(c.get("db"), c.get("caller").accountId, c.req.valid("param").id, keys(c));
    return c.json(subscriptionView(subscription, origin(c)), 200);
  },
);

webhooksRouter.openapi(
  createRoute({
    method: "get",
    path: "/{id}/deliveries",
    tags,
    security,
    request: { params: Params, query: DeliveryQuery },
    responses: { 200: jsonResponse(listEnvelope(DeliverySchema, "WebhookDeliveryList"), "Newest first"), ...errorResponses },
  }),
  async (c) => {
    const { page: _page, page_size: _size, cursor: _cursor, ...filters } = c.req.valid("query");
    const page = await listDeliveries(c.get("db"), c.get("caller").accountId, c.req.valid("param").id, filters, pageRequest(c));
    return c.json(envelope(c, page, page.results.map(deliveryView)), 200);
  },
);

webhooksRouter.openapi(
  createRoute({
    method: "get",
    path: "/{id}/deliveries/{delivery_id}",
    tags,
    security,
    request: { params: DeliveryParams },
    responses: { 200: jsonResponse(DeliverySchema, "The delivery and its attempts"), ...errorResponses },
  }),
  async (c) => {
    const { id, delivery_id } = c.req.valid("param");
    return c.json(deliveryView(await getDelivery(c.get("db"), c.get("caller").accountId, id, delivery_id)), 200);
  },
);

webhooksRouter.openapi(
  createRoute({
    method: "post",
    path: "/{id}/deliveries/{delivery_id}/redeliver",
    tags,
    security,
    request: { params: DeliveryParams },
    responses: { 202: jsonResponse(DeliverySchema, "A new attempt is queued"), ...errorResponses },
  }),
  async (c) => {
    const { id, delivery_id } = c.req.valid("param");
    return c.json(deliveryView(await redeliver(c.get("db"), c.env.DELIVERIES, c.get("caller").accountId, id, delivery_id)), 202);
  },
);
