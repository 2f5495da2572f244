import { sql } from "drizzle-orm";
import { runNamedBatch } from "../../db/client";
import { guardedInsert } from "../../db/guarded-insert";
import { webhookDeliveries } from "../../db/schema";
import { UNKEYED, type Keyed, type KeyedWrite } from "../../idempotency";
import type { ServiceContext } from "../../context";
import { toIso } from "../../lib/time";
import type { Delivery } from "./deliveries";
import { handOver, newDelivery } from "../outbox/outbox";
import { encodeBody, payloadFor, type PaymentSnapshot } from "../wire/payload";
import { activeSubscription } from "./subscriptions";

/** The payment a test delivery describes when the account has none yet. Pure. */
export function examplePayment(now: number) {
  const at = toIso(now);
  return {
    id: "pmt_test",
    originating_counterparty_id: "cpty_test_buyer",
    receiving_counterparty_id: "cpty_test_supplier",
    invoices: [{ id: "inv_test", invoice_number: "INV-TEST", amount_cents: 1250 }],
    amount_cents: 1250,
    currency: "USD",
    payment_method: "ach",
    status: "pending",
    instrument_number: null,
    events: [{ id: "pev_test", event_code: "PU00", status: "pending", description: "Payment created", created: at }],
    refund_reason: null,
    version: 1,
    created: at,
    updated: at,
  };
}

/**
 * A test delivery to the subscription: `payment.changed` for `latest` (the account's most recent
 * payment, or the example payment), as the subscription's flags and content type shape it, with
 * `"test": true` added; signed, retried and logged like any other delivery, and marked as a test.
 * A paused subscription is refused (409): its deliveries are not sent.
 */
export async function sendTestDelivery(
  ctx: ServiceContext,
  subscriptionId: string,
  latest: PaymentSnapshot | null,
  keyed: KeyedWrite<Delivery> = UNKEYED,
): Promise<Keyed<Delivery>> {
  const { db, accountId, queue } = ctx;
  const subscription = await activeSubscription(db, accountId, subscriptionId);
  const now = Date.now();
  const payment = latest ?? examplePayment(now);
  const row = newDelivery({
    subscriptionId,
    accountId,
    paymentId: payment.id,
    eventId: null,
    flags: null,
    body: encodeBody({ ...payloadFor(payment, subscription), test: true }, subscription.contentType),
    contentType: subscription.contentType,
    now,
    test: true,
  });
  const delivery: Delivery = { delivery: row, attempts: [] };
  const made = sql`exists (select 1 from ${webhookDeliveries} where ${webhookDeliveries.id} = ${row.id})`;
  const batch = await runNamedBatch(db, {
    key: keyed.claim,
    insert: guardedInsert(db, webhookDeliveries, row, keyed.owns),
    answer: await keyed.answer(delivery, made),
  });
  const decided = keyed.decided(batch.key);
  if (decided) return { decided };
  await handOver(db, queue, [row.id]);
  return { ran: delivery };
}
