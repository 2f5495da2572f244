/**
 * Order per payment (docs/interface.md, "Ordered per payment"): a delivery of a `per_payment`
 * subscription is attempted only once every earlier delivery of its payment on that subscription
 * has ended. The rule is stated once here (`waitsFor`) and the SQL of the admission read and the
 * release is made from it (`blockedSql`), so that every consumer invocation and isolate decides it
 * in D1, in the round trip where admission is decided (delivery/lease.ts `readAdmission`).
 *
 * - A delivery made while its subscription is `per_payment` is `ordered` (outbox.ts); a later
 *   change of the setting applies to later deliveries. Test and health deliveries have no payment
 *   and are never ordered; a redelivery or recovery clears `ordered` (it goes out when asked).
 * - At the admission read, an ordered delivery that an earlier one still holds back takes no place
 *   and is not leased; nothing is written for it: its message is acked, and it waits with no lane
 *   nor connection. The lease that takes a payment's next delivery takes, in its round trip, the
 *   deliveries waiting behind it as its run (`runOf` from behind it, RUN_AT_MOST at most): the
 *   consumer attempts them after it, one after another, each only once the one before succeeded.
 * - The batch that records an attempt ending a delivery lets the next one of its payment go at
 *   once (`nextOf` finds it): after a success, while the consumer has a free lane and time, that
 *   one and the payment's next ones after it (`runOf`, RUN_AT_MOST at most) are leased in that
 *   batch, a run the same consumer attempts one after another, each only once the one
 *   before it succeeded (delivery/lease.ts `leaseRun`); otherwise it is marked handed over now,
 *   when it is due and unleased (`releaseNext`), and the consumer hands it to the queue. Marked in
 *   the batch, it is the sweeper's should the send fail or the worker die before it: one handed
 *   over and not leased within minutes is sent again. What a run does not reach (an attempt that
 *   did not succeed, or no time left) is given back unattempted where its outcome is recorded.
 */
import { and, isNull, lt, lte, or, sql, type SQL } from "drizzle-orm";
import type { Db } from "../../db/client";
import { aliased, type Aliased } from "../../db/aliased";
import { jsonColumn, jsonRows } from "../../db/json-rows";
import { deliveryStatusIs, NOT_ENDED, ORDER_INDEX, orderedNotEnded, webhookDeliveries, type DeliveryStatus } from "../../db/schema";

/** A delivery as the order rule sees it. */
export interface Ordered {
  subscriptionId: string;
  paymentId: string;
  sequence: number | null;
  ordered: boolean;
  status: DeliveryStatus;
}

/** Whether `earlier` holds `later` back: both ordered, of one payment and subscription, `earlier` lower in sequence and not ended. Pure. */
export function waitsFor(later: Ordered, earlier: Ordered): boolean {
  return (
    later.ordered &&
    earlier.ordered &&
    later.subscriptionId === earlier.subscriptionId &&
    later.paymentId === earlier.paymentId &&
    earlier.sequence !== null &&
    later.sequence !== null &&
    earlier.sequence < later.sequence &&
    (NOT_ENDED as readonly DeliveryStatus[]).includes(earlier.status)
  );
}

/** `waitsFor` as SQL: whether any delivery holds back the delivery `row` names (read on the order index). */
export function blockedSql(row: Aliased<typeof webhookDeliveries> | typeof webhookDeliveries): SQL {
  const e = aliased(webhookDeliveries, "earlier");
  return sql`(${row.ordered} = 1 and exists (select 1 from ${e.from} where ${e.subscriptionId} = ${row.subscriptionId} and ${e.paymentId} = ${row.paymentId}
    and ${e.sequence} < ${row.sequence} and ${sql.raw(orderedNotEnded("earlier"))}))`;
}

/** A payment's deliveries on one subscription. */
export type OfPayment = { subscriptionId: string; paymentId: string };

/** The payment, on its subscription, a delivery is of. Pure. */
export const paymentOf = (row: OfPayment): OfPayment => ({ subscriptionId: row.subscriptionId, paymentId: row.paymentId });

/** The ids of the first ordered delivery not yet ended of each (subscription, payment), read on the order index. */
export function nextOf(payments: OfPayment[]): SQL {
  const n = aliased(webhookDeliveries, "next");
  const v = jsonColumn;
  const first = sql`(select ${n.id} from ${n.from} where ${n.subscriptionId} = ${v("subscriptionId")} and ${n.paymentId} = ${v("paymentId")}
    and ${sql.raw(orderedNotEnded("next"))} order by ${n.sequence} limit 1)`;
  return sql`(select ${first} from ${jsonRows(JSON.stringify(payments), "subscriptionId", "paymentId")})`;
}

/** The deliveries one lease of a run takes at most: the next of a payment (or those behind it) and those after it, attempted one after another. */
export const RUN_AT_MOST = 8;

/**
 * Where a run starts: at its payment's next delivery (the first not yet ended), or, with `behind`,
 * right after that next one, which the statement's own lease holds (`heldBy`): the run then goes
 * on from a delivery leased beside it, never from one another lease or nothing holds.
 */
export type RunStart = OfPayment & { behind?: { id: string; sequence: number } };

/** The start of a run right behind `head`, its payment's next delivery. Pure. */
export const behindOf = (head: OfPayment & { id: string; sequence: number }): RunStart => ({
  ...paymentOf(head),
  behind: { id: head.id, sequence: head.sequence },
});

/**
 * The ids of the first `atMost` ordered deliveries not yet ended of each start's payment, in the
 * payment's order, from its next delivery (or after the one it is `behind`) up to the first that
 * `runnable` refuses: a run's candidates, without a gap. Read on the order index, `atMost` entries
 * a payment at most (named: with the payments as JSON, SQLite would otherwise read each
 * subscription's every delivery by its primary key).
 */
export function runOf(starts: RunStart[], runnable: (row: Aliased<typeof webhookDeliveries>) => SQL, heldBy: string, atMost = RUN_AT_MOST): SQL {
  const n = aliased(webhookDeliveries, "next");
  const k = aliased(webhookDeliveries, "k");
  const h = aliased(webhookDeliveries, "head");
  const v = jsonColumn;
  const rows = starts.map(({ subscriptionId, paymentId, behind }) => ({
    subscriptionId,
    paymentId,
    headId: behind?.id ?? null,
    headSequence: behind?.sequence ?? null,
  }));
  // The start's payment's deliveries not yet ended, from its start on, as the row `d` (named `name`) reads them.
  const from = (d: Aliased<typeof webhookDeliveries>, name: string) =>
    sql`${d.subscriptionId} = ${v("subscriptionId")} and ${d.paymentId} = ${v("paymentId")} and ${sql.raw(orderedNotEnded(name))}
      and (${v("headSequence")} is null or ${d.sequence} > ${v("headSequence")})`;
  // The head, when there is one, is held by this lease.
  const headHeld = sql`(${v("headId")} is null or exists (select 1 from ${h.from} where ${h.id} = ${v("headId")} and ${h.leaseToken} = ${heldBy}))`;
  // The payment's atMost-th not yet ended from the start: no more of them are read, however many wait.
  const last = sql`coalesce((select ${k.sequence} from ${k.from} indexed by ${sql.identifier(ORDER_INDEX)} where ${from(k, "k")}
    order by ${k.sequence} limit 1 offset ${atMost - 1}), ${Number.MAX_SAFE_INTEGER})`;
  const inOrder = sql`over (partition by ${n.subscriptionId}, ${n.paymentId} order by ${n.sequence})`;
  return sql`(select id from (select ${n.id} as id, row_number() ${inOrder} as place, sum(case when ${runnable(n)} then 0 else 1 end) ${inOrder} as refused
    from ${jsonRows(JSON.stringify(rows), "subscriptionId", "paymentId", "headId", "headSequence")} cross join ${n.from} indexed by ${sql.identifier(ORDER_INDEX)}
    on ${from(n, "next")} and ${n.sequence} <= ${last} and ${headHeld})
    where place <= ${atMost} and refused = 0)`;
}

/**
 * For each (subscription, payment) given, the first of its payment's ordered deliveries not yet
 * ended, when it is pending, due and unleased (the one that waited for the delivery that just
 * ended, or one whose message is on its way, which a second message leaves as it is): marked
 * handed over now. Returns their ids, for the caller to send.
 */
export function releaseNext(db: Db, payments: OfPayment[], now: number) {
  const d = webhookDeliveries;
  return db
    .update(d)
    .set({ enqueuedAt: now })
    .where(and(sql`${d.id} in ${nextOf(payments)}`, deliveryStatusIs("pending"), lte(d.nextAttemptAt, now), or(isNull(d.leasedUntil), lt(d.leasedUntil, now))))
    .returning({ id: d.id });
}
