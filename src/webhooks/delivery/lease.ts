import { and, eq, getTableColumns, inArray, isNull, lt, lte, or, sql, type SQL } from "drizzle-orm";
import { runNamedBatch, type Db } from "../../db/client";
import { aliased } from "../../db/aliased";
import { guardedInsert } from "../../db/guarded-insert";
import { inList } from "../../db/in-list";
import { notHeldByMove } from "../../db/moving";
import { payments, webhookAttempts, webhookDeliveries, webhookSubscriptions, type DeliveryRow, type SubscriptionRow } from "../../db/schema";
import type { LeasePlan } from "./admission";
import { applyBodies, bodySources, eventOfDelivery } from "../outbox/bodies";
import { inFlightOf, SUBSCRIPTION_ROW } from "../subscriptions/rows";
import { LEASE_MS, queueDelay } from "../wire/retry-schedule";
import { blockedSql } from "../outbox/order";

/** A message whose account's move is at its cut-over comes back this much later (from the new shard's rows by then). */
export const MOVE_HOLD_SECONDS = 5;
/** A message that arrives this close to its attempt's due time is taken as on time. */
export const EARLY_SLACK_MS = 1000;

export type { DeliveryRow, SubscriptionRow };

/** What a message's delivery turned out to be at the lease. */
export type LeaseResult =
  | { kind: "leased"; delivery: DeliveryRow; subscription: SubscriptionRow | undefined }
  | { kind: "early"; delaySeconds: number }
  | { kind: "put_off"; delaySeconds: number }
  | { kind: "waiting" }
  | { kind: "done" };

/** A subscription as the admission rule sees it: its row, its attempts in flight now and when the oldest of them started. */
export type AdmissionRow = SubscriptionRow & { inFlight: number; oldestStart: number | null };

/**
 * What the admission rule needs of a batch, in one round trip: each delivery's subscription and
 * age, whether it waits for an earlier delivery of its payment (outbox/order.ts), and the
 * subscriptions of those that do not wait, with their attempts in flight (leases not yet lapsed).
 */
export async function readAdmission(
  db: Db,
  ids: string[],
  now: number,
): Promise<{ rows: { id: string; subscriptionId: string; createdAt: number; bodyBytes: number; waiting: boolean }[]; subscriptions: AdmissionRow[] }> {
  const d = webhookDeliveries;
  // Decided here, once: a delivery found free stays free until its lease, since an ordered delivery
  // that ended never becomes pending again while ordered (a redelivery or recovery clears it).
  const waits = sql`(${activeOf(d.subscriptionId)} = 1 and ${blockedSql(d)})`;
  const { rows, subscriptions } = await runNamedBatch(db, {
    rows: db
      .select({
        id: d.id,
        subscriptionId: d.subscriptionId,
        createdAt: d.createdAt,
        waiting: sql<number>`${waits}`.mapWith(Boolean),
        // What the lease reads to make its body: the row's own, or its payment's stored detail.
        bodyBytes: sql<number>`coalesce(case when ${d.flags} is null then length(cast(${d.body} as blob)) else (select length(cast(${payments.detail} as blob)) from ${payments} where ${payments.id} = ${d.paymentId}) end, 0)`,
      })
      .from(webhookDeliveries)
      .where(inList(webhookDeliveries.id, ids)),
    subscriptions: db
      .select({
        ...getTableColumns(webhookSubscriptions),
        inFlight: inFlightOf(SUBSCRIPTION_ROW, now),
        oldestStart: sql<
          number | null
        >`(select min(c.leased_until) from ${webhookDeliveries} c where c.subscription_id = ${SUBSCRIPTION_ROW} and c.leased_until > ${now}) - ${LEASE_MS}`,
      })
      .from(webhookSubscriptions)
      .where(
        inArray(
          webhookSubscriptions.id,
          db
            .select({ id: webhookDeliveries.subscriptionId })
            .from(webhookDeliveries)
            .where(and(inList(webhookDeliveries.id, ids), sql`not ${waits}`)),
        ),
      ),
  });
  return { rows, subscriptions };
}

/** Whether the subscription `subscriptionId` names is active (1), or not or gone (0), as SQL. */
function activeOf(subscriptionId: SQL | typeof webhookDeliveries.subscriptionId): SQL {
  return sql`coalesce((select s.is_active from ${webhookSubscriptions} s where s.id = ${subscriptionId}), 0)`;
}

const DELIVERY_ROW_SUBSCRIPTION = sql.raw(`"webhook_deliveries"."subscription_id"`);
const DELIVERY_ROW_ID = sql.raw(`"webhook_deliveries"."id"`);

/**
 * The plan's rows as `id IN (…)`, so each is found by its key (an UPDATE … FROM over the plan let
 * SQLite walk every pending delivery instead: a lease took 460 ms with 15,000 pending).
 */
function idIn(rows: { id: string }[]): SQL {
  return inList(webhookDeliveries.id, rows.length > 0 ? rows.map((row) => row.id) : [""]);
}

/** A plan row's field for the delivery the statement is at. */
function planned(rows: { id: string }[], field: "cap" | "rank" | "at" | "leaseMs"): SQL {
  return sql`(select json_extract(value, ${`$.${field}`}) from json_each(${JSON.stringify(rows)}) where json_extract(value, '$.id') = ${DELIVERY_ROW_ID})`;
}

/**
 * Leases the plan's deliveries that are pending, due and not held by another copy of their
 * message, each only while its subscription's attempts in flight plus its rank stay within the
 * cap the admission rule chose (another consumer may have taken slots since the rule read them);
 * puts off the plan's others, unleased, to their time; and reads what rebuilds the leased
 * bodies, in one round trip. A leased delivery whose subscription is active gets its attempt
 * counted and logged as started here, before anything is sent: if the worker dies mid-attempt,
 * the log still shows the attempt (never answered), and the next attempt has the next number.
 * Returns each id's lease.
 */
export async function leaseDeliveries(
  db: Db,
  ids: string[],
  plan: LeasePlan,
  subscriptions: SubscriptionRow[],
  now: number,
): Promise<Map<string, LeaseResult>> {
  const token = crypto.randomUUID();
  // The subscriptions whose leased deliveries are attempted (the others are ended or held).
  const attempted = new Set(subscriptions.filter((row) => row.isActive).map((row) => row.id));
  const active = activeOf(webhookDeliveries.subscriptionId);
  // The lease starts the delivery's first attempt (SET reads the row as it was before the lease).
  const firstAttempt = sql`(${webhookDeliveries.attempts} = 0 and ${active} = 1)`;
  const leasable = and(
    eq(webhookDeliveries.status, "pending"),
    lte(webhookDeliveries.nextAttemptAt, now + EARLY_SLACK_MS),
    or(isNull(webhookDeliveries.leasedUntil), lt(webhookDeliveries.leasedUntil, now)),
    notHeldByMove(webhookDeliveries.accountId),
  );
  // A later attempt's log entry, started now and not yet answered, for each leased delivery.
  const d = aliased(webhookDeliveries, "d");
  const s = aliased(webhookSubscriptions, "s");
  const { leased, putOff, states, sources } = await runNamedBatch(db, {
    leased: db
      .update(webhookDeliveries)
      .set({
        leasedUntil: sql`${now} + coalesce(${planned(plan.lease, "leaseMs")}, ${LEASE_MS})`,
        leaseToken: token,
        attempts: sql`${webhookDeliveries.attempts} + ${active}`,
        // A first attempt is logged as started on the row itself; a later one in webhook_attempts.
        firstStartedAt: sql`case when ${firstAttempt} then ${now} else ${webhookDeliveries.firstStartedAt} end`,
        firstDurationMs: sql`case when ${firstAttempt} then 0 else ${webhookDeliveries.firstDurationMs} end`,
        firstEnded: sql`case when ${firstAttempt} then 0 else ${webhookDeliveries.firstEnded} end`,
      })
      .where(
        and(idIn(plan.lease), leasable, sql`${inFlightOf(DELIVERY_ROW_SUBSCRIPTION, now)} + ${planned(plan.lease, "rank")} <= ${planned(plan.lease, "cap")}`),
      )
      .returning(),
    logged: guardedInsert(
      db,
      webhookAttempts,
      {
        deliveryId: sql`${d.id}`,
        number: sql`${d.attempts}`,
        startedAt: now,
        durationMs: 0,
        responseStatus: null,
        error: null,
        responseExcerpt: null,
        ended: 0,
        headers: null,
      },
      sql`${d.id} in (select value from json_each(${JSON.stringify(ids)})) and ${d.leaseToken} = ${token} and ${d.attempts} > 1
        and exists (select 1 from ${s.from} where ${s.id} = ${d.subscriptionId} and ${s.isActive} = 1)`,
      d.from,
    ),
    putOff: db
      .update(webhookDeliveries)
      .set({ nextAttemptAt: planned(plan.putOff, "at"), enqueuedAt: now })
      .where(and(idIn(plan.putOff), leasable))
      .returning({ id: webhookDeliveries.id, nextAttemptAt: webhookDeliveries.nextAttemptAt }),
    states: db
      .select({
        id: webhookDeliveries.id,
        status: webhookDeliveries.status,
        nextAttemptAt: webhookDeliveries.nextAttemptAt,
        held: sql<number>`not ${notHeldByMove(webhookDeliveries.accountId)}`.mapWith(Boolean),
      })
      .from(webhookDeliveries)
      .where(inList(webhookDeliveries.id, ids)),
    // What rebuilds the bodies of the leased deliveries to attempt, in the same round trip (one
    // ended or held unattempted needs none).
    sources: bodySources(
      db,
      eventOfDelivery(
        and(inList(webhookDeliveries.id, ids), eq(webhookDeliveries.leaseToken, token), inList(webhookDeliveries.subscriptionId, [...attempted, ""])),
      ),
    ),
  });
  const bodies = new Map(
    applyBodies(
      leased.filter((row) => attempted.has(row.subscriptionId)),
      sources,
    ).map((row) => [row.id, row]),
  );
  return sortLeases(
    ids,
    leased.map((row) => bodies.get(row.id) ?? row),
    subscriptions,
    states,
    now,
    putOff,
    plan.waiting,
  );
}

/** Each id's lease, from what the lease statement took and the rows' states after it. Pure. */
export function sortLeases(
  ids: string[],
  leased: DeliveryRow[],
  subscriptions: SubscriptionRow[],
  states: { id: string; status: string; nextAttemptAt: number | null; held?: boolean }[],
  now: number,
  putOff: { id: string; nextAttemptAt: number | null }[] = [],
  waiting: string[] = [],
): Map<string, LeaseResult> {
  const waits = new Set(waiting);
  const subscriptionOf = new Map(subscriptions.map((row) => [row.id, row]));
  const taken = new Map(leased.map((row) => [row.id, row]));
  const stateOf = new Map(states.map((row) => [row.id, row]));
  const putOffUntil = new Map(putOff.map((row) => [row.id, row.nextAttemptAt ?? now]));
  const leases = new Map<string, LeaseResult>();
  for (const id of ids) {
    const delivery = taken.get(id);
    const state = stateOf.get(id);
    const until = putOffUntil.get(id);
    if (delivery) leases.set(id, { kind: "leased", delivery, subscription: subscriptionOf.get(delivery.subscriptionId) });
    else if (waits.has(id) && state?.status === "pending")
      leases.set(id, { kind: "waiting" }); // the ending of the one before it hands it over again
    else if (until !== undefined) leases.set(id, { kind: "put_off", delaySeconds: queueDelay(Math.max(0, until - now) / 1000) });
    else if (state?.status === "pending" && state.held)
      leases.set(id, { kind: "early", delaySeconds: MOVE_HOLD_SECONDS }); // its account is being moved
    else if (state?.status === "pending" && state.nextAttemptAt !== null && state.nextAttemptAt > now + EARLY_SLACK_MS) {
      // Early: a wait longer than the queue's maximum delay is reached in several hops.
      leases.set(id, { kind: "early", delaySeconds: queueDelay((state.nextAttemptAt - now) / 1000) });
    } else leases.set(id, { kind: "done" }); // dropped, already ended (never sent twice), or another copy holds it
  }
  return leases;
}
