import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../app-env";
import { AppError, invalid } from "../../errors";
import { getPayment } from "../../services/payments";
import { getSubscription, matches, parseFilters } from "../../webhooks";
import { BODY_ERRORS, jsonBody, jsonResponse, keyedAfter, serviceContext } from "../common";
import { Params, security, tags, webhookErrors } from "./shared";

const FilterTest = z.object({
  payment_id: z.string().min(1).max(64).openapi({ description: "A payment of your account.", example: "pmt_demoPaymentSettled0001" }),
});

/** Whether a subscription's filters pass a payment as it is now (docs/interface.md, "Filters"). */
export function registerFilterRoutes(router: OpenAPIHono<AppEnv>): void {
  router.openapi(
    createRoute({
      method: "post",
      path: "/{id}/filters/test",
      operationId: "testWebhookFilters",
      summary: "Would this payment's next change be delivered?",
      description:
        'Whether the subscription\'s `filters` pass the payment as it is now: `{"matches": true}` when its next change would make a delivery. Changes nothing.',
      tags,
      security,
      request: { params: Params, body: jsonBody(FilterTest) },
      responses: {
        200: jsonResponse(z.object({ matches: z.boolean().openapi({ example: true }) }).openapi("FilterTestResult"), "Whether it matches"),
        ...webhookErrors([...BODY_ERRORS, 404]),
      },
    }),
    // It writes nothing: its key is claimed first, and its answer stored with it after.
    (c) =>
      keyedAfter(c, async () => {
        const ctx = serviceContext(c);
        const subscription = await getSubscription(ctx, c.req.valid("param").id);
        const payment = await getPayment(ctx, c.req.valid("json").payment_id).catch((error: unknown) => {
          if (error instanceof AppError && error.status === 404) throw invalid({ payment_id: ["No payment with this id in your account."] });
          throw error;
        });
        return c.json({ matches: matches(parseFilters(subscription.filters), payment) }, 200);
      }),
  );
}
