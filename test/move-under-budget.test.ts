import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { eachAtMost } from "../src/lib/at-most";
import { MAX_EVENTS } from "../src/services/payments";
import { ADMIN, call, makeTenant, type User } from "./helpers/api";
import { cronRun, jobLine, type LogLine } from "./helpers/cron";
import { largestCounterparty, largestInvoice, widest } from "./helpers/largest-rows";
import { HOOK_USER } from "./helpers/webhooks";

// A move of large rows under the cron's real budget, every shard bound: each run's moves job gets
// its part of the run (lib/run-budget.ts), keeps what it copied when that part is spent, and the
// move finishes (issue: it stayed at `copying` with nothing copied, run after run).
const accountOf = async (accountId: string) => (await call("GET", `/admin/accounts/${accountId}/`, { headers: ADMIN })).json;

/** A payment of these invoices between the two. */
async function paymentWithEvents(client: User, parties: { buyer: string; supplier: string }, invoices: string[]) {
  const made = await call("POST", "/v2/payments/", {
    body: { originating_counterparty_id: parties.buyer, receiving_counterparty_id: parties.supplier, invoice_ids: invoices, payment_method: "ach" },
    headers: client.headers,
  });
  if (made.status !== 201) throw new Error(`payment: ${made.status} ${JSON.stringify(made.json)}`);
  return made.json.id as string;
}

/** `n` events on the payment, each description 1,000 characters. */
async function addEvents(processor: User, paymentId: string, n: number) {
  for (let i = 0; i < n; i++) {
    const res = await call("POST", `/v2/payments/${paymentId}/events/`, {
      body: { event_code: "PU15", description: widest(1000, `d${i}`), instrument_number: widest(255, "i") },
      headers: processor.headers,
      // Six thousand events, past an API user's rate: the limit is not what this test is about.
      bindings: { RATE_LIMITING: "off" },
    });
    if (res.status !== 201) throw new Error(`event: ${res.status} ${JSON.stringify(res.json)}`);
  }
}

/** Every row of the account's deliveries, as stored, by id. */
const deliveryRows = async (d1: D1Database, accountId: string) =>
  (await d1.prepare("select * from webhook_deliveries where account_id = ?1 order by id").bind(accountId).all()).results;

describe("a move under the cron's budget", () => {
  it("moves an account of the largest rows with every shard bound, saving its progress run by run, and changes nothing", async () => {
    const { client, processor, account } = await makeTenant({ shard: "A" });
    const buyer = await largestCounterparty(client, "buyer");
    const supplier = await largestCounterparty(client, "supplier");
    const parties = { buyer: buyer.id, supplier: supplier.id };
    // 60 payments, 3 of them over 100 invoices; 11 changes of each reach a full-detail subscription
    // (paused: its deliveries are held, so nothing about them changes while the account moves).
    const wide: string[][] = [];
    for (let p = 0; p < 3; p++) {
      const ids: string[] = [];
      for (let i = 0; i < 100; i++) ids.push((await largestInvoice(client, buyer.id, supplier.id)).id);
      wide.push(ids);
    }
    const payments: string[] = [];
    for (let p = 0; p < 60; p++) payments.push(await paymentWithEvents(client, parties, wide[p] ?? [(await largestInvoice(client, buyer.id, supplier.id)).id]));
    await eachAtMost(payments, 4, (id) => addEvents(processor, id, MAX_EVENTS - 1 - 11));
    const made = await call("POST", "/v1/webhooks/", {
      body: { event: "payment.changed", url: "http://127.0.0.1:9/hooks", content_type: "application/json", ...HOOK_USER, all_payment_details: true },
      headers: client.headers,
    });
    const subscription = made.json as { id: string };
    expect((await call("PATCH", `/v1/webhooks/${subscription.id}/`, { body: { is_active: false }, headers: client.headers })).status).toBe(200);
    await eachAtMost(payments, 4, (id) => addEvents(processor, id, 11));

    const details = async () => Promise.all(payments.map(async (id) => (await call("GET", `/v2/payments/${id}/`, { headers: client.headers })).json));
    const before = { details: await details(), deliveries: await deliveryRows(env.SHARD_A!, account.id) };
    expect(before.deliveries).toHaveLength(660);
    expect(before.details.every((detail) => detail.events.length === MAX_EVENTS)).toBe(true);

    expect((await call("POST", `/admin/accounts/${account.id}/move/`, { body: { shard: "B" }, headers: ADMIN })).status).toBe(202);
    const steps: LogLine[] = [];
    for (let run = 0; run < 30 && (await accountOf(account.id)).move !== null; run++) {
      const lines = await cronRun();
      const moves = jobLine(lines, "moves")!;
      expect(moves.type).toBe("cron_job");
      steps.push(...(moves.result as LogLine[]).filter((step) => step.account_id === account.id));
      // The whole run within an invocation's D1 queries, as the development layer counts them.
      expect(lines.find((line) => line.type === "invocation_limits" && line.handler === "scheduled")!.d1Queries).toBeLessThanOrEqual(1000);
    }
    expect(await accountOf(account.id)).toMatchObject({ shard: "B", move: null });
    // Run by run, the log shows where the copy stood, and each step went on from the last.
    const copying = steps.filter((step) => step.state === "copying");
    expect(copying.length).toBeGreaterThan(1);
    for (let i = 1; i < copying.length; i++) expect(copying[i]!.copied_rows).toBeGreaterThan(copying[i - 1]!.copied_rows);
    expect(steps.some((step) => step.at === "switched")).toBe(true);

    expect(await details()).toEqual(before.details);
    expect(await deliveryRows(env.SHARD_B!, account.id)).toEqual(before.deliveries);
    expect(await deliveryRows(env.SHARD_A!, account.id)).toEqual([]);
  });
});
