/**
 * A calendar of rounds per subscription: how many of its deliveries were sent to come back in
 * each coming round (an attempt timeout each), so that a slow subscription's put-off deliveries
 * and held-back retries come back about a limit's worth a round (in-flight.ts sends each a
 * number of rounds ahead plus a random part of one, so one booked round's deliveries come back
 * spread over a round's length, not together at its start). Counted by time alone, with
 * no mark on the messages: a round is forgotten once it is past, so a message that is lost (the
 * sweeper sends it again) or comes back to another isolate leaves nothing behind.
 */
import { ATTEMPT_TIMEOUT_MS } from "./attempt";

export const ROUND_MS = ATTEMPT_TIMEOUT_MS;
/** The furthest a delivery is sent: 60 rounds, 15 minutes. Past it the last round takes everyone. */
export const LAST_ROUND = 60;

export type Calendar = {
  /** Books the first round at least `from` rounds after now's with fewer than `limit` booked; how many rounds away it is. */
  book(subscriptionId: string, from: number, limit: number, now: number): number;
  /** How many subscriptions the calendar keeps rounds for (forgotten once all their rounds are past). */
  size(): number;
};

export function calendar(): Calendar {
  const bySubscription = new Map<string, Map<number, number>>();

  function forgetPast(rounds: Map<number, number>, current: number): void {
    for (const round of rounds.keys()) if (round < current) rounds.delete(round);
  }

  return {
    book(subscriptionId, from, limit, now) {
      const current = Math.floor(now / ROUND_MS);
      const rounds = bySubscription.get(subscriptionId) ?? new Map<number, number>();
      forgetPast(rounds, current);
      let away = Math.min(from, LAST_ROUND);
      while (away < LAST_ROUND && (rounds.get(current + away) ?? 0) >= limit) away++;
      rounds.set(current + away, (rounds.get(current + away) ?? 0) + 1);
      bySubscription.set(subscriptionId, rounds);
      if (bySubscription.size > 1000) {
        for (const [id, kept] of bySubscription) {
          forgetPast(kept, current);
          if (kept.size === 0) bySubscription.delete(id);
        }
      }
      return away;
    },
    size: () => bySubscription.size,
  };
}
