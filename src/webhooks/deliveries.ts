import { and, asc, eq, type SQL } from "drizzle-orm";
import type { Db } from "../db/client";
import { inList } from "../db/in-list";
import { groupBy } from "../lib/group-by";
import { webhookAttempts, webhookDeliveries, webhookSubscriptions, type DeliveryStatus } from "../db/schema";
import { notFound } from "../errors";
import type { PageRequest } from "../lib/pagination";
import type { Instant } from "../lib/time";
import { handOver } from "./outbox";
import type { ServiceContext } from "../context";
import { countWhere, listTable } from "../db/list-page";
import { inAccount } from "../db/scope";
import { timeConditions } from "../db/time-filters";

export type DeliveryRow = typeof webhookDeliveries.$inferSelect;
export type AttemptRow = typeof webhookAttempts.$inferSelect;

async function requireSubscription(db: Db, accountId: string, subscriptionId: string): Promise<void> {
  const found = await db
    .select({ id: webhookSubscriptions.id })
    .from(webhookSubscriptions)
    .where(and(inAccount(webhookSubscriptions, accountId), eq(webhookSubscriptions.id, subscriptionId)))
    .get();
  if (!found) throw notFound();
}

export type DeliveryFilters = { status?: DeliveryStatus[] } & Record<string, Instant | DeliveryStatus[] | undefined>;

/** A subscription's delivery log, newest first. */
export async function listDeliveries({ db, accountId }: ServiceContext, subscriptionId: string, filters: DeliveryFilters, request: PageRequest) {
  await requireSubscription(db, accountId, subscriptionId);
  const conditions: SQL[] = [
    inAccount(webhookDeliveries, accountId),
    eq(webhookDeliveries.subscriptionId, subscriptionId),
    ...timeConditions(webhookDeliveries.createdAt, "created", filters as Record<string, Instant | undefined>),
  ];
  if (filters.status) conditions.push(inList(webhookDeliveries.status, filters.status));
  const where = and(...conditions)!;
  const page = await listTable(db, webhookDeliveries, {
    where,
    sort: webhookDeliveries.createdAt,
    id: webhookDeliveries.id,
    descending: true,
    count: countWhere(db, webhookDeliveries, where),
  }, request);
  return { ...page, results: await withAttempts(db, page.rows) };
}

async function withAttempts(db: Db, rows: DeliveryRow[]) {
  if (rows.length === 0) return [];
  const attempts = await db
    .select()
    .from(webhookAttempts)
    .where(inList(webhookAttempts.deliveryId, rows.map((row) => row.id)))
    .orderBy(asc(webhookAttempts.number));
  const attemptsOf = groupBy(attempts, (attempt) => attempt.deliveryId);
  return rows.map((row) => ({ delivery: row, attempts: attemptsOf.get(row.id) ?? [] }));
}

export async function getDelivery({ db, accountId }: ServiceContext, subscriptionId: string, deliveryId: string) {
  const [found, attempts] = await db.batch([
    db.select().from(webhookDeliveries).where(ofDelivery(accountId, subscriptionId, deliveryId)),
    db.select().from(webhookAttempts).where(eq(webhookAttempts.deliveryId, deliveryId)).orderBy(asc(webhookAttempts.number)),
  ]);
  const delivery = found[0];
  if (!delivery) throw notFound();
  return { delivery, attempts };
}

/**
 * A new attempt now, with the same delivery id and body, and a fresh retry schedule. An attempt
 * in flight meanwhile is still logged, but its outcome no longer decides the delivery's state.
 */
export async function redeliver(ctx: ServiceContext, subscriptionId: string, deliveryId: string) {
  const { db, accountId, queue } = ctx;
  const now = Date.now();
  const updated = await db
    .update(webhookDeliveries)
    .set({ status: "pending", nextAttemptAt: now, scheduleStartedAt: null, enqueuedAt: null, claimedUntil: null, claimToken: null, updatedAt: now })
    .where(ofDelivery(accountId, subscriptionId, deliveryId))
    .returning({ id: webhookDeliveries.id });
  if (updated.length === 0) throw notFound();
  await handOver(db, queue, [deliveryId], true);
  return getDelivery(ctx, subscriptionId, deliveryId);
}

function ofDelivery(accountId: string, subscriptionId: string, deliveryId: string) {
  return and(inAccount(webhookDeliveries, accountId), eq(webhookDeliveries.subscriptionId, subscriptionId), eq(webhookDeliveries.id, deliveryId));
}
