import { createApp } from "./app";
import type { Env } from "./env";
import { consumeDeadLetters, consumeDeliveries, sweepOutbox, type DeliveryMessage } from "./webhooks";

const app = createApp();

export default {
  fetch: app.fetch,
  async queue(batch, env, ctx) {
    if (batch.queue.endsWith("-dlq")) await consumeDeadLetters(batch, env);
    else await consumeDeliveries(batch, env, ctx);
  },
  async scheduled(_controller, env, ctx) {
    ctx.waitUntil(sweepOutbox(env));
  },
} satisfies ExportedHandler<Env, DeliveryMessage>;
