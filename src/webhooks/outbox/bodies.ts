import { eq, sql, type SQL } from "drizzle-orm";
import type { Db } from "../../db/client";
import { inList } from "../../db/in-list";
import { paymentEvents, payments, webhookDeliveries } from "../../db/schema";
import type { webhookDeliveries as Deliveries } from "../../db/schema";

type DeliveryRow = typeof Deliveries.$inferSelect;
import { encodeBody, flagsOf, payloadFor, snapshotAt, type EventState, type StoredDetail } from "../wire/payload";

type Source = { id: string; seq: number; instrumentNumber: string | null; refundReason: string | null; detail: string | null };

/**
 * What rebuilds bodies: each event with the payment's stored detail, for the events `which` picks
 * (a list of ids, or SQL for them). A query to run in the caller's own batch, beside what it reads.
 */
export function bodySources(db: Db, which: string[] | SQL) {
  return db
    .select({
      id: paymentEvents.id,
      seq: paymentEvents.seq,
      instrumentNumber: paymentEvents.instrumentNumber,
      refundReason: paymentEvents.refundReason,
      detail: payments.detail,
    })
    .from(paymentEvents)
    .innerJoin(payments, eq(payments.id, paymentEvents.paymentId))
    .where(Array.isArray(which) ? inList(paymentEvents.id, which.length > 0 ? which : [""]) : sql`${paymentEvents.id} in ${which}`);
}

/** The event that rebuilds the body of the delivery `ofRow` picks (scoped as the caller scopes it), as SQL for bodySources. */
export const eventOfDelivery = (ofRow: SQL | undefined) =>
  sql`(select ${webhookDeliveries.eventId} from ${webhookDeliveries} where ${ofRow} and ${webhookDeliveries.flags} is not null)`;

/** The events whose bodies `rows` rebuild. Pure. */
export const eventsToRebuild = (rows: DeliveryRow[]) => [...new Set(rows.filter((row) => row.flags !== null).map((row) => row.eventId!))];

/**
 * The rows with their bodies: stored on the row (a test delivery, or one made before rows kept
 * `flags`), or rebuilt from the payment's stored detail as the delivery's event left it, shaped by
 * the flags and content type the row froze. Pure; the same bytes on every attempt, since an event
 * only appends to the detail.
 */
export function applyBodies<Row extends DeliveryRow>(rows: Row[], sources: Source[]): Row[] {
  const byEvent = new Map<string, EventState & { detail: StoredDetail }>(sources.map(({ id, detail, ...rest }) => [id, { ...rest, detail: JSON.parse(detail!) as StoredDetail }]));
  return rows.map((row) => {
    if (row.flags === null) return row;
    const source = byEvent.get(row.eventId!);
    if (!source) throw new Error(`delivery ${row.id}: its payment event ${row.eventId} is gone`);
    return { ...row, body: encodeBody(payloadFor(snapshotAt(source.detail, source), flagsOf(row.flags)), row.contentType) };
  });
}
