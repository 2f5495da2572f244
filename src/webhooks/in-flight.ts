/**
 * How many attempts this isolate has in flight, in all and per subscription. A subscription has
 * at most PER_SUBSCRIPTION at once; more wait here for a slot (a healthy receiver frees one in
 * milliseconds). A subscription whose receiver is slow (an attempt in flight for over
 * SLOW_AFTER_MS) gets no waiters: its further deliveries are put off, spread so that about
 * PER_SUBSCRIPTION come back each timeout, so a receiver that hangs holds only its own slots
 * while every other subscription's deliveries go on. The consumer takes a new batch only while
 * the isolate has fewer than TOTAL in flight.
 */
import { ATTEMPT_TIMEOUT_MS } from "./attempt";

export const TOTAL = 200;
export const PER_SUBSCRIPTION = 20;
export const SLOW_AFTER_MS = 1000;
const POLL_MS = 2;

let total = 0;
/** The attempts in flight per subscription, each a slot holding when it started. */
export type Slot = { subscriptionId: string; at: number };
const bySubscription = new Map<string, Set<Slot>>();
/** Deliveries put off per subscription whose messages have not come back yet. */
const waiting = new Map<string, number>();

/**
 * Takes a slot for an attempt to this subscription, waiting for one while it is full; resolves
 * null, without a slot, when the subscription is slow (put the delivery off instead).
 */
export async function take(subscriptionId: string, now: () => number = Date.now): Promise<Slot | null> {
  for (;;) {
    const slots = bySubscription.get(subscriptionId) ?? new Set<Slot>();
    for (const slot of slots) if (now() - slot.at > SLOW_AFTER_MS) return null;
    if (slots.size < PER_SUBSCRIPTION) {
      const slot = { subscriptionId, at: now() };
      slots.add(slot);
      bySubscription.set(subscriptionId, slots);
      total++;
      return slot;
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

export function release(slot: Slot): void {
  const slots = bySubscription.get(slot.subscriptionId);
  if (!slots?.delete(slot)) return;
  if (slots.size === 0) bySubscription.delete(slot.subscriptionId);
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
