/**
 * When to try a failed delivery again: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, then every 12 h, up to
 * 3 days after the schedule started; each delay with up to ±10% jitter. A Retry-After (on 429 and
 * 503) replaces the delay, clamped to the same range. Pure: `random` is passed in.
 */
export const BASE_DELAYS_SECONDS = [5, 5 * 60, 30 * 60, 2 * 3600, 5 * 3600, 10 * 3600];
export const STEADY_DELAY_SECONDS = 12 * 3600;
export const MIN_DELAY_SECONDS = 5;
export const MAX_DELAY_SECONDS = 12 * 3600;
export const GIVE_UP_AFTER_MS = 3 * 24 * 3600 * 1000;
export const JITTER = 0.1;
/** Cloudflare Queues' longest delay; a longer wait is reached by chaining messages. */
export const MAX_QUEUE_DELAY_SECONDS = 12 * 3600;

export interface RetryInput {
  /** Attempts made so far, including the one that just failed (1 after the first). */
  attempts: number;
  scheduleStartedAt: number;
  now: number;
  /** The response's Retry-After in seconds, when it answered 429 or 503 with one. */
  retryAfterSeconds?: number | null;
  random: () => number;
  /** The schedule's clock, sped up for the soak (dev/local-faults.ts); 1 in production. */
  scale?: number;
}

/** Seconds until the next attempt, or null when the delivery has run out of time. */
export function nextRetryDelay(input: RetryInput): number | null {
  const base = BASE_DELAYS_SECONDS[input.attempts - 1] ?? STEADY_DELAY_SECONDS;
  let delay: number;
  if (input.retryAfterSeconds != null && Number.isFinite(input.retryAfterSeconds)) {
    delay = clamp(input.retryAfterSeconds, MIN_DELAY_SECONDS, MAX_DELAY_SECONDS);
  } else {
    const jitter = 1 + (input.random() * 2 - 1) * JITTER;
    delay = clamp(Math.round(base * jitter), MIN_DELAY_SECONDS, MAX_DELAY_SECONDS);
  }
  const scale = input.scale ?? 1;
  if (input.now + delay * scale * 1000 > input.scheduleStartedAt + GIVE_UP_AFTER_MS * scale) return null;
  return delay * scale;
}

/** Reads Retry-After as seconds (delta-seconds or an HTTP date); null when absent or unreadable. */
export function parseRetryAfter(value: string | null, now: number): number | null {
  if (!value) return null;
  if (/^\s*\d+\s*$/.test(value)) return Number(value);
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, Math.ceil((date - now) / 1000));
}

/** The delay to ask of the queue for a wait of `seconds`: at most its maximum (then chained). */
export function queueDelay(seconds: number): number {
  return clamp(Math.ceil(seconds), 0, MAX_QUEUE_DELAY_SECONDS);
}

function clamp(value: number, low: number, high: number): number {
  return Math.min(high, Math.max(low, value));
}

/** An attempt that has no answer after this long has failed (a 2xx within 15 s: the README, "Receive webhooks"). */
export const ATTEMPT_TIMEOUT_MS = 15_000;

/**
 * A leased delivery is held this long: its attempt, its recording, and a margin. A lease that
 * lapses without its outcome recorded means the worker died: the sweeper re-sends it then.
 */
export const LEASE_MS = ATTEMPT_TIMEOUT_MS + 15_000;
