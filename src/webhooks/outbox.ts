import type { Db } from "../db/client";
import { inList } from "../db/in-list";
import { guardedInsert } from "../db/guarded-insert";
import { webhookDeliveries } from "../db/schema";
import type { Env } from "../env";
import type { OutboxWriter } from "../services/payments";
import { activeSubscriptions } from "../services/webhook-subscriptions";
import { enqueueDeliveries, type DeliveryMessage } from "./message";
import { encodeBody, payloadFor } from "./payload";

/**
 * The webhook outbox for payment writes: one delivery row per active subscription of the account,
 * with its body frozen now, inserted in the payment change's own batch (only if the change
 * applies). After the commit the rows go to the queue; if that send fails, the sweeper sends them.
 */
export function deliveryOutbox(env: Pick<Env, "DELIVERIES">): OutboxWriter {
  return async (db, accountId, detail, guard) => {
    const subscriptions = await activeSubscriptions(db, accountId);
    const now = Date.now();
    const rows = subscriptions.map((subscription) => ({
      id: crypto.randomUUID(),
      subscriptionId: subscription.id,
      accountId,
      paymentId: detail.id,
      body: encodeBody(payloadFor(detail, subscription), subscription.contentType),
      contentType: subscription.contentType,
      status: "pending" as const,
      attempts: 0,
      nextAttemptAt: now,
      scheduleStartedAt: null,
      enqueuedAt: null,
      claimedUntil: null,
      createdAt: now,
      updatedAt: now,
    }));
    return {
      statements: rows.map((row) => guardedInsert(db, webhookDeliveries, row, guard)),
      afterCommit: () => handOver(db, env.DELIVERIES, rows.map((row) => row.id)),
    };
  };
}

/** Sends committed deliveries to the queue and notes it; a failure is logged, never thrown. */
export async function handOver(db: Db, queue: Queue<DeliveryMessage>, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  try {
    await enqueueDeliveries(queue, ids);
    await db.update(webhookDeliveries).set({ enqueuedAt: Date.now() }).where(inList(webhookDeliveries.id, ids));
  } catch (error) {
    console.error(JSON.stringify({ type: "enqueue_failed", delivery_ids: ids, error: String(error) }));
  }
}
