/**
 * Idempotency keys (docs/interface.md, "Safe retries"): the pure decisions. A key is claimed by
 * one request at a time; what a later request with the same key gets depends on the row the claim
 * left (store.ts).
 */

/** How long a key and its answer are kept. */
export const KEY_TTL_MS = 24 * 60 * 60 * 1000;

/**
 * How long a running request holds its key. A request that has not answered by then is taken
 * for crashed: its write can no longer commit (store.ts), and the same request may run again.
 */
export const LOCK_MS = 60 * 1000;

export const HEADER = "Idempotency-Key";
export const REPLAYED_HEADER = "Idempotent-Replayed";

export const MESSAGES = {
  invalid: "Idempotency-Key must be 1 to 255 printable ASCII characters.",
  mismatch: "Idempotency-Key was used with a different request.",
  inProgress: "A request with this Idempotency-Key is in progress.",
  unreadable: "The stored answer to this Idempotency-Key was sealed with an ENCRYPTION_KEY that is no longer listed.",
} as const;

/** Why a header value is not a key, or null when it is one. Pure. */
export function keyProblem(key: string): string | null {
  return /^[\x20-\x7e]{1,255}$/.test(key) ? null : MESSAGES.invalid;
}

/** A key's row as the claim left it. */
export interface KeyRow {
  requestHash: string;
  token: string;
  status: number | null;
}

export type Decision = "run" | "replay" | "mismatch" | "in_progress";

/**
 * What a request does with a key, from the row after its claim. Pure. The request runs when the
 * claim made the key its own (a new key, an expired one, or a crashed run of the same request);
 * otherwise a different request is refused, an answered key is replayed, and a running one is busy.
 */
export function decide(row: KeyRow, mine: { token: string; requestHash: string }): Decision {
  if (row.token === mine.token && row.status === null) return "run";
  if (row.requestHash !== mine.requestHash) return "mismatch";
  if (row.status !== null) return "replay";
  return "in_progress";
}

/** Answers stored with their key: 2xx, and 4xx but a conflict (409) or a throttle (429). Pure. */
export function storable(status: number): boolean {
  return (status >= 200 && status < 300) || (status >= 400 && status < 500 && status !== 409 && status !== 429);
}
