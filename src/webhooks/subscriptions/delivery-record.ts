import { toIso } from "../../lib/time";
import type { AttemptRow, DeliveryRow } from "./deliveries";
import { sentHeaders } from "../wire/sent-headers";

/** What an attempt with no recorded outcome is: still running under its lease, or cut short. Pure. */
export function unendedAttempt(delivery: DeliveryRow, attempt: AttemptRow, now: number): string {
  const running = delivery.leaseToken !== null && (delivery.leasedUntil ?? 0) > now && attempt.number === delivery.attempts;
  return running ? "in progress" : "interrupted: the worker stopped before the answer was recorded; the receiver may have received it";
}

/** The headers of the latest attempt that recorded them. Pure. */
function lastHeaders(delivery: DeliveryRow, attempts: AttemptRow[]): Record<string, string> | null {
  const last = attempts.findLast((attempt) => attempt.headers !== null);
  return last ? sentHeaders(delivery, last) : null;
}

/** A delivery with its attempts as the API and the archive show it. Pure but for the clock of an unended attempt. */
export function deliveryView({ delivery, attempts }: { delivery: DeliveryRow; attempts: AttemptRow[] }) {
  return {
    id: delivery.id,
    event: delivery.event ?? "payment.changed",
    payment_id: delivery.paymentId,
    event_id: delivery.eventId,
    sequence: delivery.sequence,
    payment_version: delivery.paymentVersion,
    status: delivery.status,
    attempts: attempts.map((attempt) => ({
      number: attempt.number,
      started_at: toIso(attempt.startedAt),
      duration_ms: attempt.ended ? attempt.durationMs : null,
      response_status: attempt.responseStatus,
      error: attempt.ended ? attempt.error : unendedAttempt(delivery, attempt, Date.now()),
      response_excerpt: attempt.ended ? attempt.responseExcerpt : null,
    })),
    body: delivery.body,
    created: toIso(delivery.createdAt),
    updated: toIso(delivery.updatedAt),
    next_attempt_at: delivery.nextAttemptAt === null ? null : toIso(delivery.nextAttemptAt),
    test: delivery.test,
    headers: lastHeaders(delivery, attempts),
    succeeded_at: delivery.succeededAt === null ? null : toIso(delivery.succeededAt),
    lag_ms: delivery.succeededAt === null || delivery.replayId ? null : Math.max(0, delivery.succeededAt - delivery.createdAt),
    trace_id: delivery.traceId,
    replay_id: delivery.replayId,
  };
}
