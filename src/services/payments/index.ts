import { and, eq, type SQL } from "drizzle-orm";
import { fixedLimit } from "../../db/fixed-limit";
import { inList } from "../../db/in-list";
import { isUniqueViolation } from "../../db/errors";
import { counterparties, invoiceClaimed, invoices, paymentInvoices } from "../../db/schema";
import { AppError, conflict } from "../../errors";
import { newId, newToken } from "../../lib/ids";
import { handOver, subscribersQuery } from "../../webhooks";
import type { ServiceContext } from "../../context";
import { inAccount } from "../../db/scope";
import { checkEventInput, checkPaymentInput } from "./input";
import { newPayment, type CreatePaymentInput, type PaymentEventInput } from "./lifecycle";
import { commitEvent } from "./event-write";
import { eventView, oldestFirst, type PaymentView } from "./view";
import { commitPaymentChange } from "./write-fence";
import { noAnswer, type Answer } from "../../idempotency";
import { FOLD_AFTER_MS, foldPaymentCounts } from "../payment-counts";

export { getPayment, latestPayment, listPayments, type PaymentFilters } from "./reads";
export { MAX_EVENTS, type CreatePaymentInput, type PaymentEventInput } from "./lifecycle";

const MAX_ATTEMPTS = 40;

/**
 * Creates a payment for the caller's account: one round trip reads what it checks and the
 * account's subscribers, one batch writes it with its deliveries (write-fence.ts), then the
 * deliveries go to the queue.
 */
export async function createPayment(ctx: ServiceContext, input: CreatePaymentInput, answer: Answer<SQL> = noAnswer): Promise<PaymentView> {
  const { db, accountId } = ctx;
  const paymentId = newId("pmt");
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    const [buyer, supplier, found, claimed, subscribers] = await db.batch([
      db.select().from(counterparties).where(and(inAccount(counterparties, accountId), eq(counterparties.id, input.originating_counterparty_id))),
      db.select().from(counterparties).where(and(inAccount(counterparties, accountId), eq(counterparties.id, input.receiving_counterparty_id))),
      db.select().from(invoices).where(and(inAccount(invoices, accountId), inList(invoices.id, input.invoice_ids))),
      db
        .select({ invoiceId: paymentInvoices.invoiceId, paymentId: paymentInvoices.paymentId })
        .from(paymentInvoices)
        .where(and(inList(paymentInvoices.invoiceId, input.invoice_ids), invoiceClaimed))
        .limit(fixedLimit(1)),
      subscribersQuery(db, accountId),
    ]);
    const chosen = checkPaymentInput(input, buyer[0], supplier[0], found);
    if (claimed[0]) throw conflict(`Invoice ${claimed[0].invoiceId} already belongs to payment ${claimed[0].paymentId}.`);
    const { payment, event } = newPayment(accountId, paymentId, input, chosen, { eventId: newId("pev"), writeToken: newToken(), at: 0 });
    try {
      const written = await commitPaymentChange(db, { next: payment, event, invoices: oldestFirst(chosen) }, subscribers, (written) =>
        answer(written.detail, written.guard),
      );
      if (written) {
        await handOver(db, ctx.queue, written.deliveryIds);
        await foldIfBehind(ctx, written);
        return written.detail;
      }
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      // Another payment claimed an invoice between the read and the batch; the next read says which.
    }
    await backoff(attempt);
  }
  throw busy();
}

/**
 * Records an event on a payment of the caller's account: one batch decides and writes it, with its
 * deliveries (event-write.ts), then the deliveries go to the queue.
 */
export async function recordPaymentEvent(ctx: ServiceContext, paymentId: string, input: PaymentEventInput, answer: Answer<SQL> = noAnswer) {
  checkEventInput(input);
  const written = await commitEvent(ctx.db, ctx.accountId, paymentId, input, (eventJson, applied) => answer(eventJson, applied));
  await handOver(ctx.db, ctx.queue, written.deliveryIds);
  await foldIfBehind(ctx, { stamp: written.event.createdAt, countedTo: written.countedTo });
  return eventView(written.event);
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

function busy(): AppError {
  return new AppError("busy", "The payment is being changed by other requests; retry shortly.", undefined, { "Retry-After": "1" });
}

async function backoff(attempt: number): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(50, 2 * attempt)));
}
