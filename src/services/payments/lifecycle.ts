import type { PaymentMethod, PaymentStatus } from "../../db/schema";
import { conflict, type AppError } from "../../errors";
import { canMove } from "./status";

export interface PaymentEventFields {
  event_code: string;
  description: string;
  status?: PaymentStatus;
  instrument_number?: string | null;
  refund_reason?: string | null;
}

export interface PaymentFields {
  originating_counterparty_id: string;
  receiving_counterparty_id: string;
  invoice_ids: string[];
  payment_method: PaymentMethod;
}

/**
 * A payment's events, its creation included, are at most this many. Real payments have a handful;
 * the cap keeps the detail, which lists every event and is every webhook body's `object`, well
 * under D1's 2 MB row limit whatever the events say (1,000-character descriptions, escaped).
 */
export const MAX_EVENTS = 100;

/**
 * Why the lifecycle refuses `input` on a payment in `status` with `version` (a 409 to throw), or
 * null when it allows it. Pure. The version counts the payment's events: its creation is 1 and
 * every event adds one.
 */
export function eventRefusal(payment: { status: PaymentStatus; version: number }, input: PaymentEventFields): AppError | null {
  if (payment.version >= MAX_EVENTS) return conflict(`A payment has at most ${MAX_EVENTS} events.`);
  if (input.status && !canMove(payment.status, input.status)) return conflict(`A payment cannot move from ${payment.status} to ${input.status}.`);
  return null;
}
