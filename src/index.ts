import { createApp } from "./app";
import { createDb } from "./db/client";
import type { Env } from "./env";
import { forgetExpiredKeys } from "./idempotency";
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
    // /__scheduled after (re)starting the local service, whose in-memory queue did not survive,
    // with `time` the moment they started it (the controller's scheduledTime).
    const now = Date.now();
    ctx.waitUntil(sweepOutbox(env, now, controller.cron === "@restart" ? { restartedAt: controller.scheduledTime } : {}));
    ctx.waitUntil(forgetExpiredKeys(createDb(env.DB), now));
  },
} satisfies ExportedHandler<Env, DeliveryMessage>;
