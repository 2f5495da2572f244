import { createApp } from "./app";
import { createDb } from "./db/client";
import type { Env } from "./env";
import { forgetExpiredKeys } from "./idempotency";
import { forgetAuthFailures } from "./services/auth-throttle";
import { continueErasures } from "./services/erasure";
import { applyRetention, consumeDeadLetters, consumeDeliveries, retentionDays, sweepOutbox, type DeliveryMessage } from "./webhooks";

const app = createApp();

/** When this isolate handled its first event: everything it handed to the queue or claimed came after. */
let firstEventAt: number | undefined;
const started = () => (firstEventAt ??= Date.now());

export default {
  fetch(request, env, ctx) {
    started();
    return app.fetch(request, env, ctx);
  },
  async queue(batch, env, ctx) {
    started();
    if (batch.queue.endsWith("-dlq")) await consumeDeadLetters(batch, env);
    else await consumeDeliveries(batch, env, ctx);
  },
  async scheduled(controller, env, ctx) {
    // "@restart" is never a deployed cron: `npm start` and the soak fire it through wrangler dev's
    // /__scheduled after (re)starting the local service, whose in-memory queue did not survive.
    // What was handed over or claimed before this isolate started is lost with it; since, its own.
    const restartedAt = started();
    const now = Date.now();
    ctx.waitUntil(sweepOutbox(env, now, controller.cron === "@restart" ? { restartedAt } : {}));
    ctx.waitUntil(forgetExpiredKeys(createDb(env.DB), now));
    ctx.waitUntil(forgetAuthFailures(createDb(env.DB), now));
    ctx.waitUntil(applyRetention(createDb(env.DB), env.ARCHIVE, retentionDays(env.RETENTION_DAYS), now));
    ctx.waitUntil(continueErasures(createDb(env.DB), env.ARCHIVE));
  },
} satisfies ExportedHandler<Env, DeliveryMessage>;
