/**
 * How many attempts this isolate has in flight, in all and per subscription. A receiver that
 * hangs holds at most PER_SUBSCRIPTION of them (each up to the 15 s timeout); its further
 * deliveries are put off, spread so that about that many come back each timeout, while every
 * other subscription's deliveries go on. The consumer takes a new batch only while the isolate
 * has fewer than TOTAL in flight.
 */
import { ATTEMPT_TIMEOUT_MS } from "./attempt";

export const TOTAL = 200;
export const PER_SUBSCRIPTION = 20;

let total = 0;
const bySubscription = new Map<string, number>();
/** Deliveries put off per subscription whose messages have not come back yet. */
const waiting = new Map<string, number>();

/** Takes a slot for an attempt to this subscription; false when it has as many as it may. */
export function take(subscriptionId: string): boolean {
  const held = bySubscription.get(subscriptionId) ?? 0;
  if (held >= PER_SUBSCRIPTION) return false;
  bySubscription.set(subscriptionId, held + 1);
  total++;
  return true;
}

export function release(subscriptionId: string): void {
  const held = (bySubscription.get(subscriptionId) ?? 1) - 1;
  if (held <= 0) bySubscription.delete(subscriptionId);
  else bySubscription.set(subscriptionId, held);
  total = Math.max(0, total - 1);
}

/** Seconds to put off one more delivery of a subscription at its limit. */
export function deferral(subscriptionId: string, random: () => number = Math.random): number {
  const ahead = waiting.get(subscriptionId) ?? 0;
  waiting.set(subscriptionId, ahead + 1);
  const rounds = 1 + Math.floor(ahead / PER_SUBSCRIPTION);
  return Math.min(15 * 60, rounds * (ATTEMPT_TIMEOUT_MS / 1000)) + Math.floor(random() * 3);
}

/** A put-off delivery's message is back. */
export function returned(subscriptionId: string): void {
  const ahead = (waiting.get(subscriptionId) ?? 1) - 1;
  if (ahead <= 0) waiting.delete(subscriptionId);
  else waiting.set(subscriptionId, ahead);
}

/** Resolves once the isolate has room for another batch's attempts. */
export async function room(): Promise<void> {
  while (total >= TOTAL) await new Promise((resolve) => setTimeout(resolve, 5));
}
