import { and, eq, sql, type SQL } from "drizzle-orm";
import type { Db } from "../db/client";
import { guardedInsert } from "../db/guarded-insert";
import { jsonColumn, jsonRows } from "../db/json-rows";
import { inList } from "../db/in-list";
import { webhookDeliveries, webhookSubscriptions, type WebhookContentType } from "../db/schema";
import { enqueueDeliveries, type DeliveryMessage, type Handover } from "./message";
import { encodeBody, payloadFor, type ExpansionFlags, type PaymentSnapshot } from "./payload";
import { isoSql, placeholderStamp, replacedSql } from "../db/stamped-text";

/**
 * The account's active subscriptions at this moment, as much of each as its delivery body needs:
 * read in the payment write's load batch (every write reads them: not the sealed secrets).
 */
export function subscribersQuery(db: Db, accountId: string) {
  const s = webhookSubscriptions;
  return db
    .select({
      id: s.id,
      contentType: s.contentType,
      invoiceIds: s.invoiceIds,
      paymentStatus: s.paymentStatus,
      paymentEvents: s.paymentEvents,
      refundReason: s.refundReason,
      instrumentNumber: s.instrumentNumber,
      allPaymentDetails: s.allPaymentDetails,
    })
    .from(s)
    .where(and(eq(s.accountId, accountId), eq(s.isActive, true)));
}

export type Subscriber = ExpansionFlags & { id: string; contentType: WebhookContentType };

/** A payment change as the outbox needs it: its snapshot at a given stamp, and that stamp in SQL. */
export interface OutboxChange {
  accountId: string;
  paymentId: string;
  /** The event the change adds. */
  eventId: string;
  /** The payment as it will read once written with this stamp (ms). */
  snapshotAt: (stamp: number) => PaymentSnapshot;
  /** The write's stamp, as an SQL expression that holds it once the change is in place in the batch. */
  stamp: SQL;
  /** Holds in the batch exactly when the change applied. */
  guard: SQL;
}

/** The most body text one outbox statement carries in its JSON parameter (D1 holds a value up to 2 MB). */
export const STATEMENT_TEXT = 512 * 1024;

/**
 * The outbox statements of one payment change: a delivery row per subscriber, inserted only when
 * the change applied, each body frozen with the change's stamp. The stamp is taken inside the
 * batch, so each body is rendered once with a placeholder stamp, and SQL puts the real one in.
 * The rows go in as one statement over a JSON list of them (several when their bodies are large),
 * not one statement per subscriber.
 */
export function outboxStatements(db: Db, change: OutboxChange, subscribers: Subscriber[], now = Date.now()) {
  const bodiesAt = (stamp: number) => {
    const snapshot = change.snapshotAt(stamp);
    return subscribers.map((subscriber) => encodeBody(payloadFor(snapshot, subscriber), subscriber.contentType));
  };
  const textOf = (stamp: number, i: number) => stampText(stamp, subscribers[i]!.contentType);
  const { stamp: placeholder, texts: bodies } = placeholderStamp(bodiesAt, textOf);
  const rows = subscribers.map((subscriber, i) => ({
    id: crypto.randomUUID(),
    subscriptionId: subscriber.id,
    contentType: subscriber.contentType,
    body: bodies[i]!,
    placeholder: textOf(placeholder, i),
  }));
  // Each delivery's columns, as SQL over the JSON row `v` it comes from.
  const v = (name: keyof (typeof rows)[number]) => jsonColumn(name);
  const template = newDelivery({
    id: v("id"),
    subscriptionId: v("subscriptionId"),
    accountId: change.accountId,
    paymentId: change.paymentId,
    eventId: change.eventId,
    body: replacedSql(v("body"), v("placeholder"), stampSql(change.stamp, v("contentType"))),
    contentType: v("contentType"),
    now,
  });
  // Each row also needs its subscription still there and active when the batch runs: one
  // deleted or paused since the write read it gets no delivery, rather than failing the change.
  const guard = sql`${change.guard} and exists (select 1 from ${webhookSubscriptions} s where s.id = ${v("subscriptionId")} and s.is_active = 1)`;
  return {
    statements: bySize(rows).map((group) =>
      guardedInsert(db, webhookDeliveries, template, guard, jsonRows(JSON.stringify(group), "id", "subscriptionId", "contentType", "body", "placeholder")),
    ),
    deliveryIds: rows.map((row) => row.id),
  };
}

/** Rows in order, grouped so that each group's bodies hold at most STATEMENT_TEXT characters (or one row). Pure. */
export function bySize<Row extends { body: string }>(rows: Row[]): Row[][] {
  const groups: Row[][] = [];
  let size = 0;
  for (const row of rows) {
    const last = groups.at(-1);
    if (last && size + row.body.length <= STATEMENT_TEXT) {
      last.push(row);
      size += row.body.length;
    } else {
      groups.push([row]);
      size = row.body.length;
    }
  }
  return groups;
}

/**
 * A new delivery's row, due now. It is taken as handed over at the commit: handOver clears that
 * if the send fails, and the sweeper re-sends a row whose message never ran either way.
 */
export function newDelivery<Body extends string | SQL, Ref extends string | SQL = string, Type extends WebhookContentType | SQL = WebhookContentType>(fields: {
  /** A new UUID unless given (the outbox gives each row's own, from its JSON list). */
  id?: Ref;
  subscriptionId: Ref;
  accountId: string;
  paymentId: string;
  eventId: string | null;
  body: Body;
  contentType: Type;
  now: number;
  test?: boolean;
}) {
  const { id, now, test = false, ...rest } = fields;
  return {
    id: id ?? crypto.randomUUID(),
    ...rest,
    status: "pending" as const,
    attempts: 0,
    nextAttemptAt: now,
    scheduleStartedAt: null,
    scheduleFirstAttempt: null,
    enqueuedAt: now,
    claimedUntil: null,
    claimToken: null,
    test,
    createdAt: now,
    updatedAt: now,
  };
}

/** How a stamp (ms) reads in a body: ISO 8601 in JSON, with `:` escaped in a form body. */
export function stampText(ms: number, contentType: WebhookContentType): string {
  const iso = new Date(ms).toISOString();
  return contentType === "application/json" ? iso : iso.replaceAll(":", "%3A");
}

/** The same, in SQL, for an integer-ms expression and a content type given in SQL. */
function stampSql(ms: SQL, contentType: SQL): SQL {
  const iso = isoSql(ms);
  return sql`case ${contentType} when 'application/json' then ${iso} else replace(${iso}, ':', '%3A') end`;
}

/**
 * Sends committed deliveries to the queue, now or after a delay. If the send fails, their rows
 * are marked as never handed over, so the sweeper sends them when due; a failure is logged,
 * never thrown. `markSent` stamps the rows as handed over now (when nothing else did). Says
 * whether the send went through.
 */
export async function handOver(db: Db, queue: Queue<DeliveryMessage>, items: Handover[], markSent = false): Promise<boolean> {
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
