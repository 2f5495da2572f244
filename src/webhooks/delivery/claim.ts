import { and, eq, getTableColumns, inArray, isNull, lt, lte, or, sql, type SQL } from "drizzle-orm";
import { runNamedBatch, type Db } from "../../db/client";
import { aliased } from "../../db/aliased";
import { guardedInsert } from "../../db/guarded-insert";
import { inList } from "../../db/in-list";
import { notHeldByMove } from "../../db/moving";
import { payments, webhookAttempts, webhookDeliveries, webhookSubscriptions, type DeliveryRow, type SubscriptionRow } from "../../db/schema";
import type { ClaimPlan } from "./admission";
import { applyBodies, bodySources, eventOfDelivery } from "../outbox/bodies";
import { inFlightOf, SUBSCRIPTION_ROW } from "../subscriptions/rows";
import { CLAIM_MS, queueDelay } from "../wire/retry-schedule";

/** A message whose account's move is at its cut-over comes back this much later (from the new shard's rows by then). */
export const MOVE_HOLD_SECONDS = 5;
/** A message that arrives this close to its attempt's due time is taken as on time. */
export const EARLY_SLACK_MS = 1000;

export type { DeliveryRow, SubscriptionRow };

/** What a message's delivery turned out to be at the claim. */
export type ClaimResult =
  | { kind: "claimed"; delivery: DeliveryRow; subscription: SubscriptionRow | undefined }
  | { kind: "early"; delaySeconds: number }
  | { kind: "put_off"; delaySeconds: number }
  | { kind: "done" };

/** A subscription as the admission rule sees it: its row, its attempts in flight now and when the oldest of them started. */
export type AdmissionRow = SubscriptionRow & { inFlight: number; oldestStart: number | null };

/**
 * What the admission rule needs of a batch, in one round trip: each delivery's subscription and
 * age, and those subscriptions with their attempts in flight (claims not yet lapsed).
 */
export async function readAdmission(
  db: Db,
  ids: string[],
  now: number,
): Promise<{ rows: { id: string; subscriptionId: string; createdAt: number; bodyBytes: number }[]; subscriptions: AdmissionRow[] }> {
  const d = webhookDeliveries;
  const { rows, subscriptions } = await runNamedBatch(db, {
    rows: db
      .select({
        id: d.id,
        subscriptionId: d.subscriptionId,
        createdAt: d.createdAt,
        // What the claim reads to make its body: the row's own, or its payment's stored detail.
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
        >`(select min(c.claimed_until) from ${webhookDeliveries} c where c.subscription_id = ${SUBSCRIPTION_ROW} and c.claimed_until > ${now}) - ${CLAIM_MS}`,
      })
      .from(webhookSubscriptions)
      .where(
        inArray(webhookSubscriptions.id, db.select({ id: webhookDeliveries.subscriptionId }).from(webhookDeliveries).where(inList(webhookDeliveries.id, ids))),
      ),
  });
  return { rows, subscriptions };
}

const DELIVERY_ROW_SUBSCRIPTION = sql.raw(`"webhook_deliveries"."subscription_id"`);
const DELIVERY_ROW_ID = sql.raw(`"webhook_deliveries"."id"`);

/**
 * The plan's rows as `id IN (…)`, so each is found by its key (an UPDATE … FROM over the plan let
 * SQLite walk every pending delivery instead: a claim took 460 ms with 15,000 pending).
 */
function idIn(rows: { id: string }[]): SQL {
  return inList(webhookDeliveries.id, rows.length > 0 ? rows.map((row) => row.id) : [""]);
}

/** A plan row's field for the delivery the statement is at. */
function planned(rows: { id: string }[], field: "cap" | "rank" | "at" | "lease"): SQL {
  return sql`(select json_extract(value, ${`$.${field}`}) from json_each(${JSON.stringify(rows)}) where json_extract(value, '$.id') = ${DELIVERY_ROW_ID})`;
}

/**
 * Claims the plan's deliveries that are pending, due and not held by another copy of their
 * message, each only while its subscription's attempts in flight plus its rank stay within the
 * cap the admission rule chose (another consumer may have taken slots since the rule read them);
 * puts off the plan's others, unclaimed, to their time; and reads what rebuilds the claimed
 * bodies, in one round trip. A claimed delivery whose subscription is active gets its attempt
 * counted and logged as started here, before anything is sent: if the worker dies mid-attempt,
 * the log still shows the attempt (never answered), and the next attempt has the next number.
 * Returns each id's claim.
 */
export async function claimDeliveries(
  db: Db,
  ids: string[],
  plan: ClaimPlan,
  subscriptions: SubscriptionRow[],
  now: number,
): Promise<Map<string, ClaimResult>> {
  const token = crypto.randomUUID();
  // The subscriptions whose claimed deliveries are attempted (the others are ended or held).
  const attempted = new Set(subscriptions.filter((row) => row.isActive).map((row) => row.id));
  const active = sql`coalesce((select s.is_active from ${webhookSubscriptions} s where s.id = ${webhookDeliveries.subscriptionId}), 0)`;
  // The claim starts the delivery's first attempt (SET reads the row as it was before the claim).
  const firstAttempt = sql`(${webhookDeliveries.attempts} = 0 and ${active} = 1)`;
  const waiting = and(
    eq(webhookDeliveries.status, "pending"),
    lte(webhookDeliveries.nextAttemptAt, now + EARLY_SLACK_MS),
    or(isNull(webhookDeliveries.claimedUntil), lt(webhookDeliveries.claimedUntil, now)),
    notHeldByMove(webhookDeliveries.accountId),
  );
  // A later attempt's log entry, started now and not yet answered, for each claimed delivery.
  const d = aliased(webhookDeliveries, "d");
  const s = aliased(webhookSubscriptions, "s");
  const { claimed, putOff, states, sources } = await runNamedBatch(db, {
    claimed: db
      .update(webhookDeliveries)
      .set({
        claimedUntil: sql`${now} + coalesce(${planned(plan.claim, "lease")}, ${CLAIM_MS})`,
        claimToken: token,
        attempts: sql`${webhookDeliveries.attempts} + ${active}`,
        // A first attempt is logged as started on the row itself; a later one in webhook_attempts.
        firstStartedAt: sql`case when ${firstAttempt} then ${now} else ${webhookDeliveries.firstStartedAt} end`,
        firstDurationMs: sql`case when ${firstAttempt} then 0 else ${webhookDeliveries.firstDurationMs} end`,
        firstEnded: sql`case when ${firstAttempt} then 0 else ${webhookDeliveries.firstEnded} end`,
      })
      .where(
        and(idIn(plan.claim), waiting, sql`${inFlightOf(DELIVERY_ROW_SUBSCRIPTION, now)} + ${planned(plan.claim, "rank")} <= ${planned(plan.claim, "cap")}`),
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
      sql`${d.id} in (select value from json_each(${JSON.stringify(ids)})) and ${d.claimToken} = ${token} and ${d.attempts} > 1
        and exists (select 1 from ${s.from} where ${s.id} = ${d.subscriptionId} and ${s.isActive} = 1)`,
      d.from,
    ),
    putOff: db
      .update(webhookDeliveries)
      .set({ nextAttemptAt: planned(plan.putOff, "at"), enqueuedAt: now })
      .where(and(idIn(plan.putOff), waiting))
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
    // What rebuilds the bodies of the claimed deliveries to attempt, in the same round trip (one
    // ended or held unattempted needs none).
    sources: bodySources(
      db,
      eventOfDelivery(
        and(inList(webhookDeliveries.id, ids), eq(webhookDeliveries.claimToken, token), inList(webhookDeliveries.subscriptionId, [...attempted, ""])),
      ),
    ),
  });
  const bodies = new Map(
    applyBodies(
      claimed.filter((row) => attempted.has(row.subscriptionId)),
      sources,
    ).map((row) => [row.id, row]),
  );
  return sortClaims(
    ids,
    claimed.map((row) => bodies.get(row.id) ?? row),
    subscriptions,
    states,
    now,
    putOff,
  );
}

/** Each id's claim, from what the claim statement took and the rows' states after it. Pure. */
export function sortClaims(
  ids: string[],
  claimed: DeliveryRow[],
  subscriptions: SubscriptionRow[],
  states: { id: string; status: string; nextAttemptAt: number | null; held?: boolean }[],
  now: number,
  putOff: { id: string; nextAttemptAt: number | null }[] = [],
): Map<string, ClaimResult> {
  const subscriptionOf = new Map(subscriptions.map((row) => [row.id, row]));
  const taken = new Map(claimed.map((row) => [row.id, row]));
  const stateOf = new Map(states.map((row) => [row.id, row]));
  const putOffUntil = new Map(putOff.map((row) => [row.id, row.nextAttemptAt ?? now]));
  const claims = new Map<string, ClaimResult>();
  for (const id of ids) {
    const delivery = taken.get(id);
    const state = stateOf.get(id);
    const until = putOffUntil.get(id);
    if (delivery) claims.set(id, { kind: "claimed", delivery, subscription: subscriptionOf.get(delivery.subscriptionId) });
    else if (until !== undefined) claims.set(id, { kind: "put_off", delaySeconds: queueDelay(Math.max(0, until - now) / 1000) });
    else if (state?.status === "pending" && state.held)
      claims.set(id, { kind: "early", delaySeconds: MOVE_HOLD_SECONDS }); // its account is being moved
    else if (state?.status === "pending" && state.nextAttemptAt !== null && state.nextAttemptAt > now + EARLY_SLACK_MS) {
      // Early: a wait longer than the queue's maximum delay is reached in several hops.
      claims.set(id, { kind: "early", delaySeconds: queueDelay((state.nextAttemptAt - now) / 1000) });
    } else claims.set(id, { kind: "done" }); // dropped, already ended (never sent twice), or another copy holds it
  }
  return claims;
}
