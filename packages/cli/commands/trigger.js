// `trigger`: makes a payment (or takes --payment) and records an event for each status it walks
// through, so every subscription of the account gets a delivery per step. Needs a processor user
// (only a processor records events), e.g. the demo data's demo-processor.
import { CliError, errorText } from "../api.js";

const PROCESSOR_ONLY = "Only a processor records payment events (403): run trigger as one, e.g. PAYMENTS_API_USERNAME=demo-processor.";
export const DEFAULT_STATUSES = ["in-progress", "settled"];
const CODES = { "in-progress": "PU10", settled: "PU20", failed: "PU90", canceled: "PU80", refunded: "PU70", pending: "PU05" };

async function firstOrNew(service, type) {
  const page = await service.request("GET", `/v1/counterparties/?type=${type}&page_size=1`);
  if (page.status !== 200) throw new CliError(`Listing ${type}s answered ${page.status}: ${errorText(page.json)}`);
  if (page.json.results.length > 0) return page.json.results[0];
  const made = await service.request("POST", "/v1/counterparties/", { body: { internal_id: `CLI-${type}-${Date.now()}`, type, name: `CLI ${type}` } });
  if (made.status !== 201) throw new CliError(`Making a ${type} answered ${made.status}: ${errorText(made.json)}`);
  return made.json;
}

async function newPayment(service) {
  const [buyer, supplier] = [await firstOrNew(service, "buyer"), await firstOrNew(service, "supplier")];
  const invoice = await service.request("POST", "/v1/invoices/", {
    body: { invoice_number: `CLI-${Date.now()}`, buyer_id: buyer.id, supplier_id: supplier.id, amount_cents: 12500 },
  });
  if (invoice.status !== 201) throw new CliError(`Making an invoice answered ${invoice.status}: ${errorText(invoice.json)}`);
  const payment = await service.request("POST", "/v2/payments/", {
    body: { originating_counterparty_id: buyer.id, receiving_counterparty_id: supplier.id, invoice_ids: [invoice.json.id], payment_method: "ach" },
  });
  if (payment.status !== 201) throw new CliError(`Making a payment answered ${payment.status}: ${errorText(payment.json)}`);
  return payment.json;
}

export async function trigger(service, { payment: paymentId, statuses = DEFAULT_STATUSES, out = process.stdout }) {
  const unknown = statuses.filter((status) => !(status in CODES));
  if (unknown.length > 0) throw new CliError(`Unknown status ${unknown.join(", ")}: use ${Object.keys(CODES).join(", ")}.`);
  // A client may make payments but not record events: find out before making anything (a client
  // gets 403 on any events path, whatever the body; a processor gets 400 or 404 here).
  const probe = await service.request("POST", "/v2/payments/pmt_triggerRoleCheck0000000/events/", { body: {} });
  if (probe.status === 403) throw new CliError(PROCESSOR_ONLY);
  let payment;
  if (paymentId) {
    const found = await service.request("GET", `/v2/payments/${encodeURIComponent(paymentId)}/`);
    if (found.status !== 200) throw new CliError(`No payment ${paymentId} for this API user (${found.status}).`);
    payment = found.json;
  } else {
    payment = await newPayment(service);
    out.write(`Made ${payment.id} (${payment.status}, version ${payment.version}).\n`);
  }
  for (const status of statuses) {
    const res = await service.request("POST", `/v2/payments/${payment.id}/events/`, {
      body: { event_code: CODES[status], description: `${status} (payments trigger)`, status },
    });
    if (res.status === 403) throw new CliError(PROCESSOR_ONLY);
    if (res.status !== 201) throw new CliError(`Recording "${status}" on ${payment.id} answered ${res.status}: ${errorText(res.json)}`);
    payment = (await service.request("GET", `/v2/payments/${payment.id}/`)).json ?? payment;
    out.write(`${payment.id} -> ${status} (version ${payment.version}).\n`);
  }
  return payment;
}
