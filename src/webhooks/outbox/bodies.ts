import { eq, sql, type SQL } from "drizzle-orm";
import { aliased, type Aliased } from "../../db/aliased";
import type { Db } from "../../db/client";
import { paymentEvents, payments, webhookDeliveries } from "../../db/schema";
import type { webhookDeliveries as Deliveries } from "../../db/schema";
import { snapshotAt, type EventState, type PaymentView } from "../../db/payment-detail";
import { encodeBody, flagsOf, payloadFor } from "../wire/payload";

type DeliveryRow = typeof Deliveries.$inferSelect;

type Source = { id: string; paymentId: string; seq: number; instrumentNumber: string | null; refundReason: string | null; detail: string | null };

/**
 * The event that rebuilds a delivery's body: its payment's event at the delivery's payment version
 * (the event's sequence number), or on a row made before it kept its version, the event it names.
 */
type EventRef = Pick<DeliveryRow, "paymentId" | "paymentVersion" | "eventId">;

/**
 * What rebuilds bodies: each event with the payment's stored detail, for the events `which` picks
 * (a list of references, or SQL selecting `payment_id, payment_version, event_id` of deliveries),
 * each found on the events' key (payment, sequence number). A query to run in the caller's own
 * batch, beside what it reads.
 */
export function bodySources(db: Db, which: EventRef[] | SQL) {
  const refs = Array.isArray(which)
    ? // Typed as the columns are, so that SQLite seeks each event on the whole key (payment, sequence number).
      sql`select cast(json_extract(value, '$[0]') as text) as payment_id, cast(json_extract(value, '$[1]') as integer) as payment_version, json_extract(value, '$[2]') as event_id
          from json_each(${JSON.stringify(which.map((ref) => [ref.paymentId, ref.paymentVersion, ref.eventId]))})`
    : which;
  return db
    .select({
      id: paymentEvents.id,
      paymentId: paymentEvents.paymentId,
      seq: paymentEvents.seq,
      instrumentNumber: paymentEvents.instrumentNumber,
      refundReason: paymentEvents.refundReason,
      detail: payments.detail,
    })
    .from(paymentEvents)
    .innerJoin(payments, eq(payments.id, paymentEvents.paymentId))
    .where(
      sql`(${paymentEvents.paymentId}, ${paymentEvents.seq}) in (
        select r.payment_id, ${eventSeqOf({ paymentId: sql.raw("r.payment_id"), paymentVersion: sql.raw("r.payment_version"), eventId: sql.raw("r.event_id") })}
        from (${refs}) r)`,
    );
}

/** The number of the event that rebuilds a delivery's body: its payment version, or on a row made before it kept one, the event it names. */
function eventSeqOf(ref: { paymentId: SQL; paymentVersion: SQL; eventId: SQL }): SQL {
  return sql`coalesce(${ref.paymentVersion}, (select x.seq from ${paymentEvents} x where x.payment_id = ${ref.paymentId} and x.id = ${ref.eventId}))`;
}

/**
 * What rebuilds the body of the delivery row `d` names, as two columns for its statement's
 * RETURNING (a lease that reads no sources beside it): its event, as bodySources picks it, and
 * the payment's stored detail; both null for a row that holds its body.
 */
export function sourceColumns(d: Aliased<typeof webhookDeliveries>) {
  const e = aliased(paymentEvents, "e");
  return {
    sourceEvent: sql<
      string | null
    >`(select json_object('id', ${e.id}, 'paymentId', ${e.paymentId}, 'seq', ${e.seq}, 'instrumentNumber', ${e.instrumentNumber}, 'refundReason', ${e.refundReason})
      from ${e.from} where ${d.flags} is not null and ${e.paymentId} = ${d.paymentId} and ${e.seq} = ${eventSeqOf(d)})`,
    sourceDetail: sql<string | null>`(select ${payments.detail} from ${payments} where ${d.flags} is not null and ${payments.id} = ${d.paymentId})`,
  };
}

/** Rows read with sourceColumns, each with its body (applyBodies) when `rebuilt` says so, as it was read otherwise. Pure. */
export function withBodies<Row extends DeliveryRow>(
  read: (Row & { sourceEvent: string | null; sourceDetail: string | null })[],
  rebuilt: (row: Row) => boolean = () => true,
): Row[] {
  const rows = read.map(({ sourceEvent: _event, sourceDetail: _detail, ...row }) => row as unknown as Row);
  const sources = read
    .filter((row) => row.sourceEvent !== null && rebuilt(row))
    .map((row) => ({ ...(JSON.parse(row.sourceEvent!) as Omit<Source, "detail">), detail: row.sourceDetail }));
  const bodies = new Map(applyBodies(rows.filter(rebuilt), sources).map((row) => [row.id, row]));
  return rows.map((row) => bodies.get(row.id) ?? row);
}

/** The event that rebuilds the body of the delivery `ofRow` picks (scoped as the caller scopes it), as SQL for bodySources. */
export const eventOfDelivery = (ofRow: SQL | undefined) =>
  sql`select ${webhookDeliveries.paymentId}, ${webhookDeliveries.paymentVersion}, ${webhookDeliveries.eventId} from ${webhookDeliveries} where ${ofRow} and ${webhookDeliveries.flags} is not null`;

/** The events whose bodies `rows` rebuild. Pure. */
export const eventsToRebuild = (rows: DeliveryRow[]): EventRef[] => {
  const refs = rows.filter((row) => row.flags !== null).map(({ paymentId, paymentVersion, eventId }) => ({ paymentId, paymentVersion, eventId }));
  return [...new Map(refs.map((ref) => [JSON.stringify(ref), ref])).values()];
};

/**
 * The rows with their bodies and events: stored on the row (a test delivery, or one made before
 * rows kept `flags`), or rebuilt from the payment's stored detail as the delivery's event left it,
 * shaped by the flags and content type the row froze; `event_id` is that event's. Pure; the same
 * bytes on every attempt, since an event only appends to the detail.
 */
export function applyBodies<Row extends DeliveryRow>(rows: Row[], sources: Source[]): Row[] {
  const states: (EventState & Source & { stored: PaymentView })[] = sources.map((source) => ({ ...source, stored: JSON.parse(source.detail!) as PaymentView }));
  const byVersion = new Map(states.map((state) => [`${state.paymentId} ${state.seq}`, state]));
  const byId = new Map(states.map((state) => [state.id, state]));
  return rows.map((row) => {
    if (row.flags === null) return row;
    const source = row.paymentVersion !== null ? byVersion.get(`${row.paymentId} ${row.paymentVersion}`) : byId.get(row.eventId!);
    if (!source) throw new Error(`delivery ${row.id}: its payment event (${row.paymentId} version ${row.paymentVersion ?? row.eventId}) is gone`);
    return { ...row, eventId: source.id, body: encodeBody(payloadFor(snapshotAt(source.stored, source), flagsOf(row.flags)), row.contentType) };
  });
}
