import { and, sql, type SQL } from "drizzle-orm";
import type { Db } from "../../db/client";
import { guardedInsert } from "../../db/guarded-insert";
import { inList } from "../../db/in-list";
import { uuidSql } from "../../db/uuid-sql";
import { payments, sendsSql, webhookDeliveries, webhookSubscriptions, type WebhookContentType } from "../../db/schema";
import type { Aliased } from "../../db/aliased";
import { enqueueDeliveries, type Handover, type ShardQueue } from "./message";
import { flagBitsSql } from "../wire/payload";
import { matchesSql } from "./filters";
import { nextSequence } from "./sequence";
import { blockedSql } from "./order";
import { newTrace, type Trace } from "../wire/trace";

/**
 * The outbox statement of a payment change decided whole in its own batch: one delivery row for
 * each of the account's `payment.changed` subscriptions whose filters (as they are then) pass the
 * payment as the change left it, inserted from the subscriptions themselves, only when `applied`
 * holds of the payment row the change wrote (`payment`, an alias of payments). Each row takes its subscription's content type
 * and flags as they are now, its next sequence number, the change's stamp (`updated` of the row `payment` names) as its
 * `created` and the payment's version; it is pending (and handed over at the commit) when its
 * subscription sends (schema's `sends`: active, its receiver's ownership proven or not
 * required), else held; it is ordered when its subscription is `per_payment`
 * (webhooks/outbox/order.ts), and carries the write's trace. Returns each row's id and status, and
 * whether it waits for an earlier delivery of its payment, to hand the pending ones that do not
 * to the queue (`toSend`).
 */
export function outboxOfChange(
  db: Db,
  change: { accountId: string; paymentId: string; payment: Aliased<typeof payments>; applied: SQL; trace: Trace },
  now = Date.now(),
) {
  const s = webhookSubscriptions;
  const column = (name: keyof typeof s.$inferSelect) => sql`${s[name]}`;
  const p = change.payment;
  const template = newDelivery({
    id: uuidSql(),
    subscriptionId: column("id"),
    accountId: change.accountId,
    paymentId: change.paymentId,
    eventId: null,
    body: "",
    flags: flagBitsSql((name) => column(name)),
    contentType: column("contentType"),
    now,
    createdAt: sql`${p.updatedAt}`,
    sequence: nextSequence(column("id")),
    trace: change.trace,
  });
  const active = sql.raw(sendsSql(`"webhook_subscriptions"`));
  const row = {
    ...template,
    paymentVersion: sql`${p.version}`,
    ordered: sql`${s.ordering} = 'per_payment'`,
    status: sql`case when ${active} then 'pending' else 'held' end`,
    nextAttemptAt: sql`case when ${active} then ${now} end`,
    enqueuedAt: sql`case when ${active} then ${p.updatedAt} end`,
  };
  const payment = {
    status: sql`${p.status}`,
    originating_counterparty_id: sql`${p.originatingCounterpartyId}`,
    receiving_counterparty_id: sql`${p.receivingCounterpartyId}`,
    payment_method: sql`${p.paymentMethod}`,
    amount_cents: sql`${p.amountCents}`,
  };
  const where = sql`${change.applied} and ${s.accountId} = ${change.accountId} and ${s.event} = 'payment.changed' and ${matchesSql(sql`${s.filters}`, payment)}`;
  return guardedInsert(db, webhookDeliveries, row, where, sql`${webhookSubscriptions} join ${p.from} on ${p.id} = ${change.paymentId}`).returning({
    id: webhookDeliveries.id,
    status: webhookDeliveries.status,
    // Made behind an earlier delivery of its payment (order.ts): not sent, the end of that one lets it go.
    waiting: sql<number>`${blockedSql(webhookDeliveries)}`.mapWith(Boolean),
  });
}

/**
 * The ids of a change's new deliveries to hand to the queue at the commit: the pending ones that do
 * not wait for an earlier delivery of their payment. One that waits is taken as handed over (its
 * row says so), and the end of the one before it lets it go (order.ts). Pure.
 */
export function toSend(rows: { id: string; status: string; waiting: boolean }[]): string[] {
  return rows.filter((row) => row.status === "pending" && !row.waiting).map((row) => row.id);
}

/**
 * A new delivery's row, due now. It is taken as handed over at the commit: handOver clears that
 * if the send fails, and the sweeper re-sends a row whose message never ran either way.
 */
export function newDelivery<
  Body extends string | SQL,
  Ref extends string | SQL = string,
  Type extends WebhookContentType | SQL = WebhookContentType,
  Flags extends number | null | SQL = number | null,
  At extends number | SQL = number,
  Seq extends SQL<number> | null = null,
>(fields: {
  /** A new UUID unless given (the outbox gives each row's own, from its JSON list). */
  id?: Ref;
  subscriptionId: Ref;
  accountId: string;
  paymentId: string;
  eventId: string | null;
  body: Body;
  /** The flags that rebuild the body; null when `body` holds it. */
  flags: Flags;
  contentType: Type;
  now: number;
  /** Its `created`: now unless given (a change's deliveries take the change's stamp). */
  createdAt?: At;
  sequence?: Seq;
  paymentVersion?: number | null;
  test?: boolean;
  /** The write's trace; a new one unless given. */
  trace?: Trace;
}) {
  const { id, now, test = false, createdAt, sequence, paymentVersion = null, trace = newTrace(), ...rest } = fields;
  return {
    id: id ?? crypto.randomUUID(),
    ...rest,
    sequence: sequence ?? null,
    paymentVersion,
    status: "pending" as const,
    attempts: 0,
    nextAttemptAt: now,
    scheduleStartedAt: null,
    scheduleFirstAttempt: null,
    enqueuedAt: now,
    leasedUntil: null,
    leaseToken: null,
    test,
    createdAt: createdAt ?? now,
    updatedAt: now,
    event: null,
    ordered: false,
    succeededAt: null,
    traceId: trace.traceId,
    traceFlags: trace.flags,
    traceState: trace.state,
    replayId: null,
    replayOf: null,
    replaySequence: null,
    ...NOT_ATTEMPTED,
  };
}

/** A delivery's first-attempt columns before its first attempt. */
const NOT_ATTEMPTED = {
  firstStartedAt: null,
  firstDurationMs: null,
  firstResponseStatus: null,
  firstError: null,
  firstResponseExcerpt: null,
  firstEnded: null,
  firstHeaders: null,
} as const;

/**
 * Sends committed deliveries to the queue, now or after a delay. If the send fails, their rows
 * are marked as never handed over, so the sweeper sends them when due; a failure is logged,
 * never thrown. `markSent` stamps the rows as handed over now (when nothing else did). Says
 * whether the send went through.
 */
export async function handOver(db: Db, queue: ShardQueue, items: Handover[], markSent = false): Promise<boolean> {
  if (items.length === 0) return true;
  const ids = items.map((item) => (typeof item === "string" ? item : item.id));
  try {
    await enqueueDeliveries(queue, items);
    if (markSent) await db.update(webhookDeliveries).set({ enqueuedAt: Date.now() }).where(inList(webhookDeliveries.id, ids));
    return true;
  } catch (error) {
    console.error(JSON.stringify({ type: "enqueue_failed", delivery_ids: ids, error: String(error) }));
    await db
      .update(webhookDeliveries)
      .set({ enqueuedAt: null })
      .where(inList(webhookDeliveries.id, ids))
      .catch(() => {}); // the sweeper's overdue check still finds them
    return false;
  }
}

/**
 * Hands deliveries the sweeper found lost to the queue again: each only if `stillLost` holds when
 * the update runs (a delivery leased since it was read is its leaseholder's), as handed over now and
 * under no lease. How many went, or null when the queue refused them (the next sweep tries again).
 */
export async function handOverAgain(db: Db, queue: ShardQueue, ids: string[], stillLost: SQL, now: number): Promise<number | null> {
  if (ids.length === 0) return 0;
  const taken = await db
    .update(webhookDeliveries)
    .set({ enqueuedAt: now, leaseToken: null, leasedUntil: null })
    .where(and(inList(webhookDeliveries.id, ids), stillLost))
    .returning({ id: webhookDeliveries.id });
  return (await handOver(
    db,
    queue,
    taken.map((row) => row.id),
  ))
    ? taken.length
    : null;
}
