import { and, asc, eq, exists, isNull, sql, type SQL } from "drizzle-orm";
import { runNamedBatch, type Db } from "../../db/client";
import { UNKEYED, type Keyed, type KeyedWrite } from "../../idempotency";
import { inList } from "../../db/in-list";
import { groupBy } from "../../lib/group-by";
import { paymentEvents, webhookAttempts, webhookDeliveries, webhookSubscriptions, type DeliveryRow, type DeliveryStatus } from "../../db/schema";
import { notFound } from "../../errors";
import type { PageRequest } from "../../lib/pagination";
import type { Instant } from "../../lib/time";
import { applyBodies, bodySources, eventOfDelivery, eventsToRebuild } from "../outbox/bodies";
import { handOver } from "../outbox/outbox";
import type { ServiceContext } from "../../context";
import { countWhere, listTable } from "../../db/list-page";
import { inAccount } from "../../db/scope";
import { timeConditions } from "../../db/time-filters";
import { releaseNext } from "../outbox/order";

export type { DeliveryRow };
export type AttemptRow = typeof webhookAttempts.$inferSelect;

export async function requireSubscription(db: Db, accountId: string, subscriptionId: string): Promise<void> {
  const found = await db
    .select({ id: webhookSubscriptions.id })
    .from(webhookSubscriptions)
    .where(and(inAccount(webhookSubscriptions, accountId), eq(webhookSubscriptions.id, subscriptionId)))
    .get();
  if (!found) throw notFound();
}

export type DeliveryFilters = { status?: DeliveryStatus[]; payment_id?: string } & Record<string, Instant | DeliveryStatus[] | string | undefined>;

/** A subscription's delivery log, newest first. */
export async function listDeliveries({ db, accountId }: ServiceContext, subscriptionId: string, filters: DeliveryFilters, request: PageRequest) {
  await requireSubscription(db, accountId, subscriptionId);
  const conditions: SQL[] = [
    inAccount(webhookDeliveries, accountId),
    eq(webhookDeliveries.subscriptionId, subscriptionId),
    ...timeConditions(webhookDeliveries.createdAt, "created", filters as Record<string, Instant | undefined>),
  ];
  if (filters.status) conditions.push(inList(webhookDeliveries.status, filters.status));
  if (filters.payment_id !== undefined) conditions.push(...ofPayment(filters.payment_id));
  const where = and(...conditions)!;
  const page = await listTable(
    db,
    webhookDeliveries,
    {
      where,
      sort: webhookDeliveries.createdAt,
      id: webhookDeliveries.id,
      descending: true,
      count: countWhere(db, webhookDeliveries, where),
    },
    request,
  );
  return { ...page, results: await withAttempts(db, page.rows) };
}

/**
 * The deliveries a payment's changes made: each change's deliveries are created at its stamp, which
 * is its event's `created`, so they are found on the log index at those few instants (a test
 * delivery, made at another time, is not one of them).
 */
function ofPayment(paymentId: string): SQL[] {
  const stamps = sql`(select ${paymentEvents.createdAt} from ${paymentEvents} where ${paymentEvents.paymentId} = ${paymentId})`;
  return [sql`${webhookDeliveries.createdAt} in ${stamps}`, eq(webhookDeliveries.paymentId, paymentId)];
}

/**
 * The attempts a delivery shows: its latest ATTEMPTS_SHOWN, oldest first (`number` counts from its
 * first). A receiver that answers 429 with a short Retry-After, or many redeliveries, can make
 * thousands; every one stays in D1 and goes to the archive.
 */
export const ATTEMPTS_SHOWN = 20;

/** Only a delivery's latest `shown` attempts of webhook_attempts (its count is on its row). */
function latestAttempts(shown: number): SQL {
  return sql`${webhookAttempts.number} > (select d.attempts from ${webhookDeliveries} d where d.id = ${webhookAttempts.deliveryId}) - ${shown}`;
}

/** Reads the latest `shown` attempts of each delivery among `ids` (every one: `Infinity`), in no order. */
export function selectAttemptsOf(db: Db, ids: string[], shown: number) {
  return db
    .select()
    .from(webhookAttempts)
    .where(and(inList(webhookAttempts.deliveryId, ids), Number.isFinite(shown) ? latestAttempts(shown) : undefined));
}

/** Deliveries with their latest `shown` attempts (every one for the archive: `Infinity`) and their bodies. */
export async function withAttempts(db: Db, rows: DeliveryRow[], shown = ATTEMPTS_SHOWN) {
  if (rows.length === 0) return [];
  // Sorted here: an ORDER BY over several deliveries' attempts would need a temporary B-tree.
  // What rebuilds their bodies is read in the same round trip.
  const { attempts, sources } = await runNamedBatch(db, {
    attempts: selectAttemptsOf(
      db,
      rows.map((row) => row.id),
      shown,
    ),
    sources: bodySources(db, eventsToRebuild(rows)),
  });
  const attemptsOf = groupBy(
    [...attempts].sort((a, b) => a.number - b.number),
    (attempt) => attempt.deliveryId,
  );
  return applyBodies(rows, sources).map((row) => ({ delivery: row, attempts: allAttempts(row, attemptsOf.get(row.id) ?? [], shown) }));
}

/**
 * A delivery's attempts, oldest first: its first from its row (when the row keeps it and it is
 * among the latest `shown`) before the later ones webhook_attempts holds (`logged`, in order). Pure.
 */
export function allAttempts(delivery: DeliveryRow, logged: AttemptRow[], shown = ATTEMPTS_SHOWN): AttemptRow[] {
  if (delivery.firstStartedAt === null || logged[0]?.number === 1 || delivery.attempts > shown) return logged;
  const first: AttemptRow = {
    deliveryId: delivery.id,
    number: 1,
    startedAt: delivery.firstStartedAt,
    durationMs: delivery.firstDurationMs ?? 0,
    responseStatus: delivery.firstResponseStatus,
    error: delivery.firstError,
    responseExcerpt: delivery.firstResponseExcerpt,
    ended: delivery.firstEnded ?? 0,
    headers: delivery.firstHeaders,
  };
  return [first, ...logged];
}

/** A delivery with its attempts, oldest first. */
export interface Delivery {
  delivery: DeliveryRow;
  attempts: AttemptRow[];
}

export async function getDelivery({ db, accountId }: ServiceContext, subscriptionId: string, deliveryId: string): Promise<Delivery> {
  const { found, attempts, sources } = await runNamedBatch(db, {
    found: selectDelivery(db, accountId, subscriptionId, deliveryId),
    attempts: selectShownAttempts(db, deliveryId),
    sources: bodySources(db, eventOfDelivery(ofDelivery(accountId, subscriptionId, deliveryId))),
  });
  const delivery = found[0];
  if (!delivery) throw notFound();
  return { delivery: applyBodies([delivery], sources)[0]!, attempts: allAttempts(delivery, attempts) };
}

/**
 * A new attempt now, with the same delivery id and body, and a fresh retry schedule. An attempt
 * in flight meanwhile is still logged, but its outcome no longer decides the delivery's state. It
 * goes out when asked, whatever the order of its payment (webhooks/outbox/order.ts): it is no
 * longer ordered, so the next delivery of its payment that waited for it is released.
 */
export async function redeliver(
  ctx: ServiceContext,
  subscriptionId: string,
  deliveryId: string,
  keyed: KeyedWrite<Delivery> = UNKEYED,
): Promise<Keyed<Delivery>> {
  const { db, accountId, queue } = ctx;
  const { delivery, attempts } = await getDelivery(ctx, subscriptionId, deliveryId);
  const now = Date.now();
  const changes = {
    status: "pending",
    nextAttemptAt: now,
    scheduleStartedAt: null,
    enqueuedAt: null,
    leasedUntil: null,
    leaseToken: null,
    ordered: false,
    updatedAt: now,
  } as const;
  const after: Delivery = { delivery: { ...delivery, ...changes }, attempts };
  const ofRow = ofDelivery(accountId, subscriptionId, deliveryId);
  const batch = await runNamedBatch(db, {
    key: keyed.claim,
    update: updateDelivery(db, ofRow, changes, keyed.owns),
    released: releaseNext(db, [{ subscriptionId, paymentId: delivery.paymentId }], now),
    // Stored only if the delivery was still there to be sent again.
    answer: await keyed.answer(after, sentAgainAt(db, ofRow, now)),
  });
  const decided = keyed.decided(batch.key);
  if (decided) return { decided };
  if (batch.update.length === 0) throw notFound();
  await handOver(db, queue, [deliveryId], true);
  await handOver(
    db,
    queue,
    batch.released.map((row) => row.id),
  );
  return { ran: after };
}

function ofDelivery(accountId: string, subscriptionId: string, deliveryId: string): SQL {
  return and(inAccount(webhookDeliveries, accountId), eq(webhookDeliveries.subscriptionId, subscriptionId), eq(webhookDeliveries.id, deliveryId))!;
}

/** Reads the account's subscription's delivery. */
export function selectDelivery(db: Db, accountId: string, subscriptionId: string, deliveryId: string) {
  return db
    .select()
    .from(webhookDeliveries)
    .where(ofDelivery(accountId, subscriptionId, deliveryId));
}

/** Reads a delivery's latest ATTEMPTS_SHOWN attempts of webhook_attempts, oldest first. */
export function selectShownAttempts(db: Db, deliveryId: string) {
  return db
    .select()
    .from(webhookAttempts)
    .where(and(eq(webhookAttempts.deliveryId, deliveryId), latestAttempts(ATTEMPTS_SHOWN)))
    .orderBy(asc(webhookAttempts.number));
}

/** Writes `changes` to the delivery `ofRow` names if `guard` holds; returns its id if it did. */
export function updateDelivery(db: Db, ofRow: SQL, changes: Partial<DeliveryRow>, guard: SQL) {
  return db.update(webhookDeliveries).set(changes).where(and(guard, ofRow)).returning({ id: webhookDeliveries.id });
}

/** Whether the delivery `ofRow` names was sent again at `now` and no attempt leased it since. */
export function sentAgainAt(db: Db, ofRow: SQL, now: number): SQL {
  return exists(
    db
      .select({ id: webhookDeliveries.id })
      .from(webhookDeliveries)
      .where(and(ofRow, eq(webhookDeliveries.updatedAt, now), isNull(webhookDeliveries.leaseToken))),
  );
}
