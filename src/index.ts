import { createApp } from "./app";
import { runCron } from "./cron";
import type { Env } from "./env";
import { underPlatformLimits } from "./dev";
import { consumeDeadLetters, consumeDeliveries, type DeliveryMessage } from "./webhooks";

const app = createApp();

/** When this isolate handled its first event: everything it handed to the queue or claimed came after. */
let firstEventAt: number | undefined;
const started = () => (firstEventAt ??= Date.now());

export default underPlatformLimits<Env, DeliveryMessage>({
  fetch(request, env, ctx) {
    started();
    return app.fetch(request, env, ctx);
  },
  async queue(batch, env, ctx) {
    started();
    if (batch.queue.endsWith("-dlq")) await consumeDeadLetters(batch, env);
    else await consumeDeliveries(batch, env, ctx);
  },
  async scheduled(controller, env, _ctx) {
    // "@restart" is never a deployed cron: `npm start` and the soak fire it through wrangler dev's
    // /__scheduled after (re)starting the local service, whose in-memory queue did not survive.
    // What was handed over or claimed before this isolate started is lost with it; since, its own.
    // Awaited, not left to waitUntil: a scheduled event may run for minutes, waitUntil 30 s.
    const restartedAt = started();
    await runCron(env, Date.now(), controller.cron === "@restart" ? { restartedAt } : {}, controller.cron);
  },
});
