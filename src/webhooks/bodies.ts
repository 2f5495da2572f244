import { eq } from "drizzle-orm";
import type { Db } from "../db/client";
import { inList } from "../db/in-list";
import { paymentEvents, payments } from "../db/schema";
import type { DeliveryRow } from "./claim";
import { encodeBody, flagsOf, payloadFor, snapshotAt, type StoredDetail } from "./payload";

/**
 * A delivery's body: stored on the row (a test delivery, or one made before rows kept `flags`), or
 * rebuilt from the payment's stored detail as the delivery's event left it, shaped by the flags and
 * content type the row froze. Pure; the same bytes on every attempt, since an event only appends.
 */
export function bodyOf(row: DeliveryRow, source: { detail: StoredDetail; instrumentNumber: string | null; refundReason: string | null; seq: number } | undefined): string {
  if (row.flags === null) return row.body;
  if (!source) throw new Error(`delivery ${row.id}: its payment event ${row.eventId} is gone`);
  const snapshot = snapshotAt(source.detail, source);
  return encodeBody(payloadFor(snapshot, flagsOf(row.flags)), row.contentType);
}

/** The rows with their bodies, rebuilding those not stored: one read for all their events and payments. */
export async function withBodies<Row extends DeliveryRow>(db: Db, rows: Row[]): Promise<Row[]> {
  const events = [...new Set(rows.filter((row) => row.flags !== null).map((row) => row.eventId!))];
  if (events.length === 0) return rows;
  const sources = await db
    .select({
      id: paymentEvents.id,
      seq: paymentEvents.seq,
      instrumentNumber: paymentEvents.instrumentNumber,
      refundReason: paymentEvents.refundReason,
      detail: payments.detail,
    })
    .from(paymentEvents)
    .innerJoin(payments, eq(payments.id, paymentEvents.paymentId))
    .where(inList(paymentEvents.id, events));
  const byEvent = new Map(sources.map(({ id, detail, ...rest }) => [id, { ...rest, detail: JSON.parse(detail!) as StoredDetail }]));
  return rows.map((row) => (row.flags === null ? row : { ...row, body: bodyOf(row, byEvent.get(row.eventId!)) }));
}
