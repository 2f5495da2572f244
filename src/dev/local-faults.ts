import type { Env } from "../env";

/**
 * Settings for the soak and tests only (`npm run soak`), honoured only where local webhook URLs are
 * allowed (ALLOW_LOCAL_WEBHOOK_URLS="true", which the deployed configuration never sets); anywhere
 * else they are ignored.
 *   RETRY_TIME_SCALE     the retry schedule's clock, sped up: 0.001 makes 5 min 0.3 s (0 < s <= 1);
 *   QUEUE_SEND_FAILURES  the share of a payment write's queue sends that fail (0 to 1), so that
 *                        the sweeper's recovery is exercised.
 */
function local(env: Env): boolean {
  return env.ALLOW_LOCAL_WEBHOOK_URLS === "true";
}

function share(value: string | undefined, low: number, high: number, fallback: number): number {
  const n = Number(value);
  return value !== undefined && Number.isFinite(n) && n >= low && n <= high ? n : fallback;
}

/** The retry schedule's time scale: 1 unless the soak asked for a faster one. */
export function retryTimeScale(env: Env): number {
  return local(env) ? share(env.RETRY_TIME_SCALE, Number.MIN_VALUE, 1, 1) : 1;
}

/**
 * The engine's configuration, built once at the edge (src/index.ts): the bindings with the
 * deliveries queue the soak may make fail, and the retry schedule's time scale.
 */
export function localSettings(env: Env): { env: Env; retryScale: number } {
  const queue = deliveriesQueue(env);
  // The bindings as they are, unless the soak asked for a failing queue.
  return { env: queue === env.DELIVERIES ? env : { ...env, DELIVERIES: queue }, retryScale: retryTimeScale(env) };
}

/** The deliveries queue, failing that share of sends when the soak asks for it. */
export function deliveriesQueue(env: Env): Env["DELIVERIES"] {
  const failures = local(env) ? share(env.QUEUE_SEND_FAILURES, 0, 1, 0) : 0;
  if (failures === 0) return env.DELIVERIES;
  const fail = () => Math.random() < failures;
  const queue = env.DELIVERIES;
  return {
    send: (body, options) => (fail() ? Promise.reject(new Error("injected queue send failure")) : queue.send(body, options)),
    sendBatch: (messages, options) => (fail() ? Promise.reject(new Error("injected queue send failure")) : queue.sendBatch(messages, options)),
  } as Env["DELIVERIES"];
}
