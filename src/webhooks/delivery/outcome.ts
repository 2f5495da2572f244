import { nextRetryDelay, parseRetryAfter } from "../wire/retry-schedule";

/** After this long with every delivery failing, a subscription is deactivated. */
export const DEACTIVATE_AFTER_FAILING_MS = 5 * 24 * 3600 * 1000;

export interface OutcomeInput {
  /** The delivery as leased: attempts made before this one, and when its schedule started. */
  attempts: number;
  scheduleStartedAt: number | null;
  /** The number of the attempt that started the schedule (null: attempt 1, or no schedule yet). */
  scheduleFirstAttempt?: number | null;
  /** Since when every delivery of the subscription has failed; null when the last one succeeded. */
  failingSince: number | null;
  /** The attempt: the receiver's status (null: no answer), its Retry-After, when it started and ended. */
  responseStatus: number | null;
  retryAfter: string | null;
  startedAt: number;
  endedAt: number;
  random: () => number;
  /** The retry schedule's clock scale (retry-schedule.ts); 1 in production. */
  scale?: number;
}

export interface Outcome {
  number: number;
  status: "succeeded" | "pending" | "failed";
  /** Seconds until the next attempt; null when the delivery has ended. */
  retryInSeconds: number | null;
  scheduleStartedAt: number;
  scheduleFirstAttempt: number;
  failingSince: number | null;
  deactivate: boolean;
}

/**
 * What one attempt means for its delivery and subscription. Pure. A 2xx succeeds; a 410 ends the
 * delivery and deactivates the subscription; anything else is retried on the schedule (a 429 or
 * 503's Retry-After replacing the delay) until it runs out, and a subscription that has failed
 * for 5 days is deactivated.
 */
export function decideOutcome(input: OutcomeInput): Outcome {
  const number = input.attempts + 1;
  const scheduleStartedAt = input.scheduleStartedAt ?? input.startedAt;
  // A schedule starts with this attempt when none runs (the first attempt, or after a redelivery).
  const scheduleFirstAttempt = input.scheduleStartedAt === null ? number : (input.scheduleFirstAttempt ?? 1);
  const status = input.responseStatus;
  const ok = status !== null && status >= 200 && status < 300;
  const gone = status === 410;
  const retryAfter = status === 429 || status === 503 ? parseRetryAfter(input.retryAfter, input.endedAt) : null;
  const retryInSeconds =
    ok || gone
      ? null
      : nextRetryDelay({
          attempts: number - scheduleFirstAttempt + 1,
          scheduleStartedAt,
          now: input.endedAt,
          retryAfterSeconds: retryAfter,
          random: input.random,
          scale: input.scale,
        });
  const failingSince = ok ? null : (input.failingSince ?? input.endedAt);
  return {
    number,
    status: ok ? "succeeded" : retryInSeconds === null ? "failed" : "pending",
    retryInSeconds,
    scheduleStartedAt,
    scheduleFirstAttempt,
    failingSince,
    deactivate: gone || (!ok && input.endedAt - failingSince! >= DEACTIVATE_AFTER_FAILING_MS),
  };
}
