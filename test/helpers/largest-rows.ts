/**
 * The largest rows the API accepts, made through the API: every text at its longest, of a
 * character that takes the most bytes once stored as JSON (a control character, escaped as
 * `\u0001`: 6 bytes for one character).
 */
import { MAX_EVENTS } from "../../src/services/payments";
import { call, type User } from "./api";

export const widest = (length: number, tag = "") => (tag + "\u0001".repeat(length)).slice(0, length);

let made = 0;
const next = () => (made += 1).toString(36).padStart(4, "0");

export async function largestCounterparty(user: User, type: "buyer" | "supplier") {
  const res = await call("POST", "/v1/counterparties/", { body: { internal_id: widest(255, next()), type, name: widest(255, "n") }, headers: user.headers });
  if (res.status !== 201) throw new Error(`counterparty: ${res.status} ${JSON.stringify(res.json)}`);
  return res.json as { id: string };
}

export async function largestInvoice(user: User, buyerId: string, supplierId: string) {
  const res = await call("POST", "/v1/invoices/", {
    body: { invoice_number: widest(255, next()), buyer_id: buyerId, supplier_id: supplierId, amount_cents: 1 },
    headers: user.headers,
  });
  if (res.status !== 201) throw new Error(`invoice: ${res.status} ${JSON.stringify(res.json)}`);
  return res.json as { id: string };
}

/** A payment of 100 invoices with MAX_EVENTS events, every description, code, instrument number and the refund reason at their longest. */
export async function largestPayment(client: User, processor: User) {
  const buyer = await largestCounterparty(client, "buyer");
  const supplier = await largestCounterparty(client, "supplier");
  const invoices = [];
  for (let i = 0; i < 100; i++) invoices.push(await largestInvoice(client, buyer.id, supplier.id));
  const made = await call("POST", "/v2/payments/", {
    body: {
      originating_counterparty_id: buyer.id,
      receiving_counterparty_id: supplier.id,
      invoice_ids: invoices.map((invoice) => invoice.id),
      payment_method: "ach",
    },
    headers: client.headers,
  });
  if (made.status !== 201) throw new Error(`payment: ${made.status} ${JSON.stringify(made.json)}`);
  const id = made.json.id as string;
  const event = async (body: Record<string, unknown>) => {
    const res = await call("POST", `/v2/payments/${id}/events/`, {
      body: { event_code: widest(64, "E"), description: widest(1000, "d"), ...body },
      headers: processor.headers,
    });
    if (res.status !== 201) throw new Error(`event: ${res.status} ${JSON.stringify(res.json)}`);
  };
  // The creation is the first event; the last three move it to refunded.
  for (let i = 1; i < MAX_EVENTS - 3; i++) await event({ instrument_number: widest(255, "i") });
  await event({ status: "in-progress" });
  await event({ status: "settled" });
  await event({ status: "refunded", refund_reason: widest(1000, "r") });
  return { id, buyer, supplier, invoices };
}
