import { createApp } from "./app";
import { runCron } from "./cron";
import type { Env } from "./env";
import { localSettings, underPlatformLimits } from "./dev";
import { consumeDeadLetters, consumeDeliveries, type QueueMessage } from "./webhooks";

const app = createApp();

/** When this isolate handled its first event: everything it handed to the queue or leased came after. */
let firstEventAt: number | undefined;
const started = () => (firstEventAt ??= Date.now());

/**
 * The Worker's three handlers, under the development layer (src/dev/: Cloudflare's limits where
 * PLATFORM_LIMITS asks, and the soak's settings where local URLs are allowed), which only this
 * edge imports: the engine gets the bindings and settings it makes.
 */
export default underPlatformLimits<Env, QueueMessage>({
  fetch(request, bindings, ctx) {
    started();
    return app.fetch(request, localSettings(bindings).env, ctx);
  },
  async queue(batch, bindings, ctx) {
    started();
    const { env, retryScale } = localSettings(bindings);
    if (batch.queue.endsWith("-dlq")) await consumeDeadLetters(batch, env);
    else await consumeDeliveries(batch, env, ctx, { retryScale });
  },
  async scheduled(controller, bindings, _ctx) {
    const { env } = localSettings(bindings);
    // "@restart" is never a deployed cron: `npm start` and the soak fire it through wrangler dev's
    // /__scheduled after (re)starting the local service, whose in-memory queue did not survive.
    // What was handed over or leased before this isolate started is lost with it; since, its own.
    // Awaited, not left to waitUntil: a scheduled event may run for minutes, waitUntil 30 s.
    const restartedAt = started();
    await runCron(env, Date.now(), controller.cron === "@restart" ? { restartedAt } : {}, controller.cron);
  },
});
