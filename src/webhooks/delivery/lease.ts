import { and, eq, getTableColumns, inArray, isNull, lt, lte, or, sql, type SQL } from "drizzle-orm";
import { runNamedBatch, type Db } from "../../db/client";
import { aliased, type Aliased } from "../../db/aliased";
import { guardedInsert } from "../../db/guarded-insert";
import { inList } from "../../db/in-list";
import { notHeldByMove } from "../../db/moving";
import {
  deliveryStatusIs,
  payments,
  sends,
  sendsSql,
  webhookAttempts,
  webhookDeliveries,
  webhookSubscriptions,
  type DeliveryRow,
  type SubscriptionRow,
} from "../../db/schema";
import type { LeasePlan } from "./admission";
import { sourceColumns, withBodies } from "../outbox/bodies";
import { inFlightOf, SUBSCRIPTION_ROW } from "../subscriptions/rows";
import { LEASE_MS, queueDelay } from "../wire/retry-schedule";
import { WAIT_UNTIL_MS } from "../../lib/platform-limits";
import { blockedSql, runOf, type RunStart } from "../outbox/order";

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

/** A delivery as admission reads it: its subscription, age, body's bytes, whether it waits, and its payment's order. */
export type AdmittedRow = {
  id: string;
  subscriptionId: string;
  paymentId: string;
  createdAt: number;
  bodyBytes: number;
  waiting: boolean;
  ordered: boolean;
  sequence: number | null;
};

/**
 * What the admission rule needs of a batch, in one round trip: each delivery's subscription and
 * age, whether it waits for an earlier delivery of its payment (outbox/order.ts), and the
 * subscriptions of those that do not wait, with their attempts in flight (leases not yet lapsed).
 */
export async function readAdmission(db: Db, ids: string[], now: number): Promise<{ rows: AdmittedRow[]; subscriptions: AdmissionRow[] }> {
  return runNamedBatch(db, { rows: selectAdmissionRows(db, ids), subscriptions: selectAdmissionSubscriptions(db, ids, now) });
}

/**
 * Whether the delivery waits for an earlier one of its payment: decided here, once. A delivery
 * found free stays free until its lease, since an ordered delivery that ended never becomes
 * pending again while ordered (a redelivery or recovery clears it).
 */
const waits = sql`(${activeOf(webhookDeliveries.subscriptionId)} = 1 and ${blockedSql(webhookDeliveries)})`;

/** Reads each delivery's subscription, age, whether it waits, and the bytes its body reads. */
export function selectAdmissionRows(db: Db, ids: string[]) {
  const d = webhookDeliveries;
  return db
    .select({
      id: d.id,
      subscriptionId: d.subscriptionId,
      paymentId: d.paymentId,
      createdAt: d.createdAt,
      waiting: sql<number>`${waits}`.mapWith(Boolean),
      bodyBytes: bodyBytesOf(d),
      ordered: d.ordered,
      sequence: d.sequence,
    })
    .from(d)
    .where(inList(d.id, ids));
}

/** What a lease reads to make the delivery's body, in bytes: the row's own, or its payment's stored detail. */
function bodyBytesOf(d: typeof webhookDeliveries | Aliased<typeof webhookDeliveries>): SQL<number> {
  return sql<number>`coalesce(case when ${d.flags} is null then length(cast(${d.body} as blob)) else (select length(cast(${payments.detail} as blob)) from ${payments} where ${payments.id} = ${d.paymentId}) end, 0)`;
}

/** Reads the subscriptions of the deliveries that do not wait, with their attempts in flight at `now` and when the oldest started. */
export function selectAdmissionSubscriptions(db: Db, ids: string[], now: number) {
  return db
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
    );
}

/** Whether the subscription `subscriptionId` names sends (1: schema's `sends`), or not or gone (0), as SQL. */
function activeOf(subscriptionId: SQL | typeof webhookDeliveries.subscriptionId): SQL {
  return sql`coalesce((select ${sql.raw(sendsSql("s"))} from ${webhookSubscriptions} s where s.id = ${subscriptionId}), 0)`;
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

/** A delivery a lease may take at `now` (the row `d` names): pending, due, not leased by another copy of its message, not held by a move. */
function leasable(now: number, row: typeof webhookDeliveries | Aliased<typeof webhookDeliveries> = webhookDeliveries): SQL {
  // The table's columns and an alias's render alike in SQL: read both as the alias's.
  const d = row as Aliased<typeof webhookDeliveries>;
  return and(
    deliveryStatusIs("pending", d),
    lte(d.nextAttemptAt, now + EARLY_SLACK_MS),
    or(isNull(d.leasedUntil), lt(d.leasedUntil, now)),
    notHeldByMove(d.accountId),
  )!;
}

/**
 * Leases the plan's leasable deliveries under `token`, each only while its subscription's attempts
 * in flight plus its rank stay within the cap the admission rule chose (another consumer may have
 * taken slots since the rule read them). One whose subscription is active gets its attempt
 * counted, and a first attempt logged as started on the row itself. Returns the rows leased, each
 * with what rebuilds its body (`sourceColumns`).
 */
export function leasePlanned(db: Db, plan: { id: string }[], token: string, now: number) {
  return db
    .update(webhookDeliveries)
    .set(leaseColumns(token, now, sql`coalesce(${planned(plan, "leaseMs")}, ${LEASE_MS})`))
    .where(and(idIn(plan), leasable(now), sql`${inFlightOf(DELIVERY_ROW_SUBSCRIPTION, now)} + ${planned(plan, "rank")} <= ${planned(plan, "cap")}`))
    .returning(LEASED_ROW);
}

/** What a lease returns of each row it takes: the row, and what rebuilds its body (outbox/bodies.ts `sourceColumns`). */
const LEASED_ROW = { ...getTableColumns(webhookDeliveries), ...sourceColumns(aliased(webhookDeliveries, "webhook_deliveries")) };

/**
 * A lease's columns: held `leaseMs` from `now` under `token`; if its subscription is active, its
 * attempt counted, and a first attempt logged as started on the row itself (SET reads the row as
 * it was before the lease).
 */
function leaseColumns(token: string, now: number, leaseMs: SQL) {
  const active = activeOf(webhookDeliveries.subscriptionId);
  const firstAttempt = sql`(${webhookDeliveries.attempts} = 0 and ${active} = 1)`;
  return {
    leasedUntil: sql`${now} + ${leaseMs}`,
    leaseToken: token,
    attempts: sql`${webhookDeliveries.attempts} + ${active}`,
    firstStartedAt: sql`case when ${firstAttempt} then ${now} else ${webhookDeliveries.firstStartedAt} end`,
    firstDurationMs: sql`case when ${firstAttempt} then 0 else ${webhookDeliveries.firstDurationMs} end`,
    firstEnded: sql`case when ${firstAttempt} then 0 else ${webhookDeliveries.firstEnded} end`,
  };
}

/** How long a run's leases hold: while its deliveries wait their turn in the lane, which ends within the invocation's waitUntil. */
export const RUN_LEASE_MS = LEASE_MS + WAIT_UNTIL_MS;

/**
 * Leases, for RUN_LEASE_MS under `token`, a run of each payment given (outbox/order.ts `runOf`):
 * its first ordered deliveries not yet ended, or those behind the next one when this lease holds
 * that one, up to the first that is not `runnable` (not leasable, attempted before, its
 * subscription not sending, or its body past `bodyBytes`). So a run always starts at the payment's
 * next delivery, or right behind it, and has no gap. The consumer that recorded the end of the one
 * before them, or leased the one before them, attempts them one after another, with no message and
 * no admission read.
 * Their first attempts are counted and logged on their rows, as any lease's; those the run does
 * not reach are given back (`giveBack`). One attempted before, which a delivery that waited for
 * its payment's earlier ones never is, keeps its own schedule. Returns the rows leased.
 */
export function leaseRun(db: Db, of: RunStart[], token: string, now: number, bodyBytes: number) {
  // Never attempted and its subscription sends (`runnable`): this lease starts its first attempt.
  const firstAttempt = { leasedUntil: now + RUN_LEASE_MS, leaseToken: token, attempts: 1, firstStartedAt: now, firstDurationMs: 0, firstEnded: 0 };
  return db
    .update(webhookDeliveries)
    .set(firstAttempt)
    .where(sql`${webhookDeliveries.id} in ${runOf(of, (row) => runnable(row, now, bodyBytes), token)}`)
    .returning(LEASED_ROW);
}

/** Whether a run may take the delivery `d` names: leasable, never attempted, its subscription sending, its body within `bodyBytes`. */
function runnable(d: Aliased<typeof webhookDeliveries>, now: number, bodyBytes: number): SQL {
  return and(leasable(now, d), eq(d.attempts, 0), sql`${activeOf(d.subscriptionId)} = 1`, sql`${bodyBytesOf(d)} <= ${bodyBytes}`)!;
}

/**
 * Gives back, unattempted, the deliveries among `rows` a run leased and did not reach: unleased,
 * their attempt uncounted, as they were before it. Each under its own lease (the rows and their
 * tokens are one bound value, whatever their number).
 */
export function giveBack(db: Db, rows: DeliveryRow[]) {
  const leases = JSON.stringify(rows.map((row) => [row.id, row.leaseToken]));
  return db
    .update(webhookDeliveries)
    .set({ leasedUntil: null, leaseToken: null, attempts: 0, firstStartedAt: null, firstDurationMs: null, firstEnded: null })
    .where(
      and(
        sql`(${webhookDeliveries.id}, ${webhookDeliveries.leaseToken}) in (select json_extract(value, '$[0]'), json_extract(value, '$[1]') from json_each(${leases}))`,
        eq(webhookDeliveries.attempts, 1),
        deliveryStatusIs("pending"),
      ),
    );
}

/** Logs a later attempt, started now and not yet answered, for each delivery among `ids` leased under `token` whose subscription is active. */
export function logLaterAttempts(db: Db, ids: string[], token: string, now: number) {
  const d = aliased(webhookDeliveries, "d");
  const s = aliased(webhookSubscriptions, "s");
  return guardedInsert(
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
        and exists (select 1 from ${s.from} where ${s.id} = ${d.subscriptionId} and ${sql.raw(sendsSql("s"))})`,
    d.from,
  );
}

/** Puts the plan's leasable deliveries off, unleased, to their planned time; returns them. */
export function putOffPlanned(db: Db, plan: { id: string }[], now: number) {
  return db
    .update(webhookDeliveries)
    .set({ nextAttemptAt: planned(plan, "at"), enqueuedAt: now })
    .where(and(idIn(plan), leasable(now)))
    .returning({ id: webhookDeliveries.id, nextAttemptAt: webhookDeliveries.nextAttemptAt });
}

/** Reads each delivery's status, due time and whether a move holds it: what a message that was not leased turns out to be. */
export function selectLeaseStates(db: Db, ids: string[]) {
  return db
    .select({
      id: webhookDeliveries.id,
      status: webhookDeliveries.status,
      nextAttemptAt: webhookDeliveries.nextAttemptAt,
      held: sql<number>`not ${notHeldByMove(webhookDeliveries.accountId)}`.mapWith(Boolean),
    })
    .from(webhookDeliveries)
    .where(inList(webhookDeliveries.id, ids));
}

/**
 * Leases the plan's deliveries that are pending, due and not held by another copy of their
 * message (leasePlanned); puts off the plan's others, unleased, to their time; and reads what
 * rebuilds the leased bodies, in one round trip. A leased delivery whose subscription is active
 * gets its attempt counted and logged as started here, before anything is sent: if the worker
 * dies mid-attempt, the log still shows the attempt (never answered), and the next attempt has
 * the next number. Behind each ordered delivery of `runs.behind` that it leases, the deliveries of
 * its payment that wait for it are leased as its run (`leaseRun`), each body within
 * `runs.bodyBytes`, in the same round trip. Returns each id's lease, and the runs.
 */
export async function leaseDeliveries(
  db: Db,
  ids: string[],
  plan: LeasePlan,
  subscriptions: SubscriptionRow[],
  now: number,
  runs: { behind: RunStart[]; bodyBytes: number } = { behind: [], bodyBytes: 0 },
): Promise<{ leases: Map<string, LeaseResult>; runs: DeliveryRow[] }> {
  const token = crypto.randomUUID();
  // The subscriptions whose leased deliveries are attempted (the others are ended or held).
  const attempted = new Set(subscriptions.filter(sends).map((row) => row.id));
  const { leased, run, putOff, states } = await runNamedBatch(db, {
    leased: leasePlanned(db, plan.lease, token, now),
    // After the lease: behind each of its ordered deliveries, the run of those waiting for it.
    run: runs.behind.length > 0 ? [leaseRun(db, runs.behind, token, now, runs.bodyBytes)] : [],
    logged: logLaterAttempts(db, ids, token, now),
    putOff: putOffPlanned(db, plan.putOff, now),
    states: selectLeaseStates(db, ids),
  });
  return {
    // A body is made for the attempts only (one ended or held unattempted needs none).
    leases: sortLeases(
      ids,
      withBodies(leased, (row) => attempted.has(row.subscriptionId)),
      subscriptions,
      states,
      now,
      putOff,
      plan.waiting,
    ),
    runs: withBodies(run.flat()),
  };
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
