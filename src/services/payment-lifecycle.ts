import type { PaymentStatus } from "../db/schema";
import { conflict } from "../errors";
import { canMove } from "./payment-status";
import type { EventRow, PaymentRow } from "./payment-view";

export interface PaymentEventInput {
  event_code: string;
  description: string;
  status?: PaymentStatus;
  instrument_number?: string | null;
  refund_reason?: string | null;
}

/** What an event brings that the pure step cannot make itself: fresh ids and the write's stamp. */
export interface EventStamp {
  eventId: string;
  writeToken: string;
  at: number;
}

/**
 * The next payment row and its event, for one event on `payment`. Pure. An event changes only what
 * it names: without `status` the status stays, without `instrument_number` the instrument stays,
 * and `refund_reason` is set only by the move to refunded (and kept by every later event).
 * A move the lifecycle forbids throws 409 and changes nothing.
 */
export function applyEvent(payment: PaymentRow, input: PaymentEventInput, stamp: EventStamp): { next: PaymentRow; event: EventRow } {
  if (input.status && !canMove(payment.status, input.status)) {
    throw conflict(`A payment cannot move from ${payment.status} to ${input.status}.`);
  }
  const status = input.status ?? payment.status;
  const next: PaymentRow = {
    ...payment,
    status,
    instrumentNumber: input.instrument_number !== undefined ? input.instrument_number : payment.instrumentNumber,
    refundReason: input.status === "refunded" ? (input.refund_reason ?? null) : payment.refundReason,
    version: payment.version + 1,
    writeToken: stamp.writeToken,
    updatedAt: stamp.at,
  };
  const event: EventRow = {
    id: stamp.eventId,
    paymentId: payment.id,
    seq: next.version,
    eventCode: input.event_code,
    status,
    description: input.description,
    createdAt: stamp.at,
  };
  return { next, event };
}
