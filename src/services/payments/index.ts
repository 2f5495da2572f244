import type { SQL } from "drizzle-orm";
import { handOver, newTrace, type Trace } from "../../webhooks";
import type { ServiceContext } from "../../context";
import { checkEventInput, type PaymentFields, type PaymentEventFields } from "./lifecycle";
import { commitEvent } from "./event-write";
import { eventView, type EventView, type PaymentView } from "../../db/payment-detail";
import { commitNewPayment } from "./new-payment";
import { UNKEYED, type Keyed, type KeyedWrite } from "../../idempotency";
import { FOLD_AFTER_MS, foldPaymentCounts } from "../counts";

export { getPayment, latestPayment, listPayments, type PaymentFilters } from "./reads";
export { MAX_EVENTS, type PaymentFields, type PaymentEventFields } from "./lifecycle";

/**
 * Creates a payment for the caller's account: one batch checks and writes it, with its deliveries
 * (new-payment.ts), then the deliveries go to the queue. They carry `trace`, the write's (a new one unless given).
 */
export async function createPayment(
  ctx: ServiceContext,
  input: PaymentFields,
  keyed: KeyedWrite<SQL> = UNKEYED,
  trace: Trace = newTrace(),
): Promise<Keyed<PaymentView>> {
  const written = await commitNewPayment(ctx.db, ctx.accountId, input, keyed, trace);
  if ("decided" in written) return written;
  await handOver(ctx.db, ctx.queue, written.ran.deliveryIds);
  await foldIfBehind(ctx, written.ran);
  return { ran: written.ran.detail };
}

/**
 * Records an event on a payment of the caller's account: one batch decides and writes it, with its
 * deliveries (event-write.ts), then the deliveries go to the queue. They carry `trace`, as above.
 */
export async function recordPaymentEvent(
  ctx: ServiceContext,
  paymentId: string,
  input: PaymentEventFields,
  keyed: KeyedWrite<SQL> = UNKEYED,
  trace: Trace = newTrace(),
): Promise<Keyed<EventView>> {
  checkEventInput(input);
  const written = await commitEvent(ctx.db, ctx.accountId, paymentId, input, keyed, trace);
  if ("decided" in written) return written;
  const { event, deliveryIds, countedTo } = written.ran;
  await handOver(ctx.db, ctx.queue, deliveryIds);
  await foldIfBehind(ctx, { stamp: event.createdAt, countedTo });
  return { ran: eventView(event) };
}

/**
 * Asks for a fold of the account's payment counts when their mark is FOLD_AFTER_MS behind this
 * write, after the answer: the changes a count adds up at read time stay a second's worth.
 */
async function foldIfBehind(ctx: ServiceContext, written: { stamp: number; countedTo: number }): Promise<void> {
  if (written.stamp - written.countedTo < FOLD_AFTER_MS) return;
  const fold = foldPaymentCounts(ctx.db, ctx.accountId, written.stamp - FOLD_AFTER_MS + 1).catch((error) =>
    console.error(JSON.stringify({ type: "fold_error", account_id: ctx.accountId, error: String(error) })),
  );
  if (ctx.later) ctx.later(fold);
  else await fold;
}
