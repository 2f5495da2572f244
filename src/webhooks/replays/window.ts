/**
 * What a replay may ask for (docs/interface.md, "Replay"): a window of at most MAX_REPLAY_DAYS,
 * not reversed, not in the future, and at most MAX_REPLAY_PAYMENTS payments. Pure.
 */
const DAY_MS = 86_400_000;
export const MAX_REPLAY_DAYS = 400;
export const MAX_REPLAY_PAYMENTS = 50;
/** An `until` this far past the service's clock is taken as now (a client's clock runs a little ahead). */
export const CLOCK_SLACK_MS = 60_000;

export interface ReplayAsk {
  since: number;
  until: number | undefined;
  paymentIds: string[] | undefined;
}

/** The window and payments a replay asked for, or why it is refused (field errors, as the API shows them). Pure. */
export function replayWindow(
  ask: ReplayAsk,
  now: number,
): { since: number; until: number; paymentIds: string[] | null } | { problem: Record<string, string[]> } {
  if (ask.since > now) return { problem: { since: ["Ensure since is not in the future."] } };
  if (ask.until !== undefined && ask.until > now + CLOCK_SLACK_MS) return { problem: { until: ["Ensure until is not in the future."] } };
  const until = Math.min(ask.until ?? now, now);
  if (until < ask.since) return { problem: { until: ["Ensure until is not before since."] } };
  if (until - ask.since > MAX_REPLAY_DAYS * DAY_MS)
    return { problem: { since: [`Ensure the window from since to until spans at most ${MAX_REPLAY_DAYS} days.`] } };
  if (ask.paymentIds === undefined) return { since: ask.since, until, paymentIds: null };
  const paymentIds = [...new Set(ask.paymentIds)];
  if (paymentIds.length > MAX_REPLAY_PAYMENTS) return { problem: { payment_id: [`Ensure this field has no more than ${MAX_REPLAY_PAYMENTS} elements.`] } };
  if (paymentIds.length === 0) return { problem: { payment_id: ["This list may not be empty."] } };
  return { since: ask.since, until, paymentIds };
}
