/**
 * Operational events (docs/interface.md, "Operational events"): a subscription whose `event` is
 * `subscription.health` receives, signed and delivered like any other, what happens to the
 * account's other subscriptions: `subscription.failing` (its deliveries have failed for an hour,
 * or 10 attempts in a row), `subscription.disabled` (by a 410 or 5 days of failures),
 * `subscription.recovered` (a success after it was reported failing) and `delivery.exhausted` (a
 * delivery gave up after 3 days); and, from the lag alert (lag-alert.ts), `subscription.lagging`
 * and `subscription.caught_up`.
 *
 * Each is written in the batch that records the attempts that caused it, and only when that
 * batch makes the transition (a guarded update of the subscription, then the events' rows under
 * `changes()`), so it is sent once per occurrence however many consumers record at once, and
 * never to the subscription it is about.
 */
import { and, eq, isNull, sql, type SQL } from "drizzle-orm";
import { endOf, type Attempted } from "./attempted";
import type { BatchStatement, Db } from "../../db/client";
import { sendsSql, webhookDeliveries, webhookSubscriptions } from "../../db/schema";
import { nextSequence, numberedStamp } from "../outbox/sequence";
import { guardedInsert } from "../../db/guarded-insert";
import { encodeBody } from "../wire/payload";
import type { LagEvent } from "../subscriptions/lag";

export const HEALTH_EVENT = "subscription.health";
export const FAILING_AFTER_MS = 3600 * 1000;
export const FAILING_AFTER_ATTEMPTS = 10;

export type HealthEventName = "subscription.failing" | "subscription.disabled" | "subscription.recovered" | "delivery.exhausted" | LagEvent;

/** What an event says, beyond its name and subject. */
export interface HealthEvent {
  event: HealthEventName;
  subscriptionId: string;
  at: number;
  detail: Record<string, unknown>;
}

/** The event's body: the fields docs/interface.md names, then what it says. Pure. */
export function healthBody(event: HealthEvent): Record<string, unknown> {
  return { object_type: "subscription", object_id: event.subscriptionId, event: event.event, occurred_at: new Date(event.at).toISOString(), ...event.detail };
}

/**
 * A subscription's run of failed attempts after a batch of its attempts, oldest first: the count
 * of failures since its last success (none in the batch: added to what it had). Pure.
 */
export function failuresAfter(before: number, succeeded: boolean[]): number {
  const lastSuccess = succeeded.lastIndexOf(true);
  return lastSuccess === -1 ? before + succeeded.length : succeeded.length - lastSuccess - 1;
}

/**
 * A UUID v4 made in SQL, per row (a health event's deliveries are made by the statement itself):
 * random hex in each part, the version and variant set; no subquery, which SQLite would run once
 * for the whole statement.
 */
const uuidSql = sql.raw(
  `lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6)))`,
);

/**
 * The rows of one event for every health subscription of the account but its subject, inserted
 * only when `when` holds (SQL read as the statement runs). Returns their ids and statuses.
 */
export function healthDeliveries(db: Db, accountId: string, event: HealthEvent, when: SQL, now: number): BatchStatement {
  const body = healthBody(event);
  const json = encodeBody(body, "application/json");
  const form = encodeBody(body, "application/x-www-form-urlencoded");
  const d = webhookDeliveries;
  // A paused health subscription holds its events (holds.ts).
  const active = sql.raw(sendsSql("h"));
  const row = {
    id: uuidSql,
    subscriptionId: sql`h.id`,
    accountId,
    paymentId: "",
    eventId: null,
    body: sql`case when h.content_type = 'application/json' then ${json} else ${form} end`,
    flags: null,
    contentType: sql`h.content_type`,
    status: sql`case when ${active} then 'pending' else 'held' end`,
    attempts: 0,
    nextAttemptAt: sql`case when ${active} then ${now} end`,
    enqueuedAt: sql`case when ${active} then ${now} end`,
    sequence: nextSequence(sql`h.id`),
    // Above the subscription's newest delivery: events recorded by consumers whose clocks differ
    // still sit in its log in sequence order (sequence.ts).
    createdAt: numberedStamp(sql`h.id`, now),
    updatedAt: now,
    event: event.event,
  };
  const others = sql`h.account_id = ${accountId} and h.event = ${HEALTH_EVENT} and h.id <> ${event.subscriptionId} and ${when}`;
  return guardedInsert(db, d, row, others, sql`${webhookSubscriptions} h`).returning({ id: d.id, status: d.status });
}

/**
 * The ids of the pending deliveries a batch's health statements wrote, to hand to the queue: the
 * rows `healthDeliveries` returned, among the other statements' results.
 */
export function toldPending(results: readonly unknown[]): string[] {
  return results.flatMap((rows) =>
    (Array.isArray(rows) ? (rows as { id?: string; status?: string }[]) : []).filter((row) => row.status === "pending" && row.id).map((row) => row.id!),
  );
}

/**
 * The statements that make each subscription's health transitions and tell health subscriptions
 * of them, once: disabled (a 410 or 5 days of failures), each delivery that ran out of retries,
 * failing (an hour, or FAILING_AFTER_ATTEMPTS failures in a row) and recovered. Each is a guarded
 * update of the subscription and, right after it, the event's rows under `changes() = 1`.
 */
export function healthStatements(db: Db, attempted: Attempted[], latest: Map<string, Attempted>, now: number): BatchStatement[] {
  const s = webhookSubscriptions;
  const out: BatchStatement[] = [];
  const tell = (accountId: string, event: HealthEvent, when: SQL = sql`changes() = 1`) => out.push(healthDeliveries(db, accountId, event, when, now));
  for (const { delivery, result, outcome } of latest.values()) {
    const { accountId, subscriptionId } = delivery;
    const ofRow = eq(s.id, subscriptionId);
    if (outcome.deactivate) {
      out.push(
        db
          .update(s)
          .set({ isActive: false, updatedAt: endOf({ result }) })
          .where(and(ofRow, eq(s.isActive, true))),
      );
      tell(accountId, { event: "subscription.disabled", subscriptionId, at: now, detail: { reason: result.responseStatus === 410 ? "gone" : "failing" } });
    }
    // Failing can only start with a failure among these attempts, and recovery with a success.
    const own = attempted.filter((item) => item.delivery.subscriptionId === subscriptionId);
    if (own.some((item) => item.outcome.status !== "succeeded")) {
      out.push(
        db
          .update(s)
          .set({ failingReported: true })
          .where(
            and(
              ofRow,
              eq(s.failingReported, false),
              sql`(${s.consecutiveFailures} >= ${FAILING_AFTER_ATTEMPTS} or ${s.failingSince} <= ${now - FAILING_AFTER_MS})`,
            ),
          ),
      );
      tell(accountId, {
        event: "subscription.failing",
        subscriptionId,
        at: now,
        detail: { failing_since: outcome.failingSince === null ? null : new Date(outcome.failingSince).toISOString() },
      });
    }
    if (own.some((item) => item.outcome.status === "succeeded")) {
      out.push(
        db
          .update(s)
          .set({ failingReported: false })
          .where(and(ofRow, eq(s.failingReported, true), isNull(s.failingSince))),
      );
      tell(accountId, { event: "subscription.recovered", subscriptionId, at: now, detail: {} });
    }
  }
  // A delivery that ran out of retries (a 410 disables instead), once: its row ended as failed under this attempt.
  for (const item of attempted) {
    const { delivery, result, outcome } = item;
    if (outcome.status !== "failed" || result.responseStatus === 410) continue;
    const ended = sql`exists (select 1 from ${webhookDeliveries} x where x.id = ${delivery.id} and x.status = 'failed' and x.updated_at = ${endOf(item)} and x.lease_token is null)`;
    tell(
      delivery.accountId,
      { event: "delivery.exhausted", subscriptionId: delivery.subscriptionId, at: now, detail: { delivery_id: delivery.id, payment_id: delivery.paymentId } },
      ended,
    );
  }
  return out;
}
