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
  async scheduled(controller, env, ctx) {
    // "@restart" is never a deployed cron: `npm start` and the soak fire it through wrangler dev's
    // /__scheduled after (re)starting the local service, whose in-memory queue did not survive.
    ctx.waitUntil(sweepOutbox(env, Date.now(), { restarted: controller.cron === "@restart" }));
  },
} satisfies ExportedHandler<Env, DeliveryMessage>;
