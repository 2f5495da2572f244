import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { eachAtMost } from "../src/lib/at-most";
import { MAX_EVENTS } from "../src/services/payments";
import { ADMIN, call, makeCounterparty, makeInvoice, makeTenant, type User } from "./helpers/api";
import { cronRun, jobLine, type LogLine } from "./helpers/cron";
import { largestCounterparty, largestInvoice, widest } from "./helpers/largest-rows";
import { HOOK_USER } from "./helpers/webhooks";

// A move of large rows under the cron's real budget, every shard bound: each run's moves job gets
// its part of the run (lib/run-budget.ts), keeps what it copied when that part is spent, and the
// move finishes (issue: it stayed at `copying` with nothing copied, run after run).
/**
 * Runs a move may take here before the test gives up. A step copies for at most its time budget, so
 * a loaded machine copies less a run: the bound stops a move that never ends, not a slow one.
 */
const MOST_RUNS = 200;
/** A test's time: MOST_RUNS runs on a loaded machine. */
const LONG = 900_000;
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

/**
 * `n` events after its creation on each payment, each description 1,000 characters (escaped, 6
 * bytes each) and an instrument number of 255, written on the shard as the API writes them, and
 * each payment's detail made again from its rows (the seeds' SQL, which test/seed-sql.test.ts
 * holds to the API's): thousands of events in a few statements, where the API takes a request each.
 */
async function earlierEvents(shard: D1Database, payments: string[], n: number) {
  await shard
    .prepare(
      `insert into payment_events (id, payment_id, seq, event_code, status, description, instrument_number, refund_reason, created_at)
       with recursive k(seq) as (select 2 union all select seq + 1 from k where seq < ?2 + 1)
       select 'pev_' || lower(hex(randomblob(12))), p.id, k.seq, 'PU15', p.status, ?3, ?4, null, p.created_at + k.seq
       from payments p, k where p.id in (select value from json_each(?1))`,
    )
    .bind(JSON.stringify(payments), n, widest(1000, "d"), widest(255, "i"))
    .run();
  await shard
    .prepare(
      "update payments set version = ?2 + 1, instrument_number = ?3, updated_at = created_at + ?2 + 1, detail = null where id in (select value from json_each(?1))",
    )
    .bind(JSON.stringify(payments), n, widest(255, "i"))
    .run();
  await shard.prepare(env.PAYMENT_DETAIL_SQL).run();
}

/** Every row of the account's deliveries, as stored, by id. */
const deliveryRows = async (d1: D1Database, accountId: string) =>
  (await d1.prepare("select * from webhook_deliveries where account_id = ?1 order by id").bind(accountId).all()).results;

describe("a move under the cron's budget", () => {
  it(
    "moves an account of the largest rows with every shard bound, saving its progress run by run, and changes nothing",
    async () => {
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
      for (let p = 0; p < 60; p++)
        payments.push(await paymentWithEvents(client, parties, wide[p] ?? [(await largestInvoice(client, buyer.id, supplier.id)).id]));
      await earlierEvents(env.SHARD_A!, payments, MAX_EVENTS - 1 - 11);
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
      for (let run = 0; run < MOST_RUNS && (await accountOf(account.id)).move !== null; run++) {
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
    },
    LONG,
  );

  it(
    "moves a small account while a writer keeps changing it, under the cron's budget, and loses no write nor key",
    async () => {
      const { client, processor, account } = await makeTenant({ shard: "A" });
      const buyer = await makeCounterparty(client, "buyer");
      const supplier = await makeCounterparty(client, "supplier");
      const invoices: string[] = [];
      for (let i = 0; i < 20; i++) invoices.push((await makeInvoice(client, buyer.id, supplier.id)).id);
      const payment = await paymentWithEvents(client, { buyer: buyer.id, supplier: supplier.id }, invoices.slice(0, 1));
      // A day's keyed writes already on the shard (their keys move with the account).
      await env
        .SHARD_A!.prepare(
          `insert into idempotency_keys (account_id, username, key, request_hash, token, locked_until, status, body, created_at)
       with recursive n(i) as (select 1 union all select i + 1 from n where i < 2000) select ?1, ?2, 'old-' || i, 'h', 't', 0, 201, '{}', ?3 from n`,
        )
        .bind(account.id, client.username, Date.now())
        .run();

      // The writer: events on the payment up to its cap, then invoices, each with a key, retrying a 503.
      let writing = true;
      const answered: { key: string; status: number }[] = [];
      const write = async (n: number) => {
        const key = `w-${n}`;
        const [path, body, user] =
          n < MAX_EVENTS - 1
            ? [`/v2/payments/${payment}/events/`, { event_code: "PU15", description: `note ${n}` }, processor]
            : ["/v1/invoices/", { invoice_number: `INV-w-${n}`, buyer_id: buyer.id, supplier_id: supplier.id, amount_cents: 100 }, client];
        for (;;) {
          // Thousands of writes, past an API user's rate: the limit is not what this test is about.
          const res = await call("POST", path, { body, headers: { ...user.headers, "Idempotency-Key": key }, bindings: { RATE_LIMITING: "off" } });
          if (res.status === 503) {
            expect(res.headers.get("Retry-After")).toBe("2");
            continue;
          }
          answered.push({ key, status: res.status });
          return;
        }
      };
      // It writes all the while, and a burst before each cron run: a minute's worth of changes for
      // the run to catch up on before its cut-over.
      // At most WRITES in all, so the rows to move (and the runs that clean the old shard) do not
      // grow with the machine's speed.
      const WRITES = 1_500;
      let written = 0;
      const writer = (async () => {
        while (writing && written < WRITES) await write(written++);
      })();
      const burst = async (n: number) => {
        for (let i = 0; i < n && written < WRITES; i++) await write(written++);
      };

      expect((await call("POST", `/admin/accounts/${account.id}/move/`, { body: { shard: "B" }, headers: ADMIN })).status).toBe(202);
      const steps: LogLine[] = [];
      for (let run = 0; run < MOST_RUNS && (await accountOf(account.id)).move !== null; run++) {
        await burst(150);
        const lines = await cronRun();
        steps.push(...((jobLine(lines, "moves")!.result ?? []) as LogLine[]).filter((step) => step.account_id === account.id));
        expect(lines.filter((line) => line.type === "cron_error")).toEqual([]);
      }
      writing = false;
      await writer;
      expect(await accountOf(account.id)).toMatchObject({ shard: "B", move: null });
      expect(steps.some((step) => step.at === "switched")).toBe(true);
      expect(answered.length).toBeGreaterThan(MAX_EVENTS);
      expect(answered.filter((one) => one.status !== 201)).toEqual([]);
      // Every write is there, each key on the new shard with its answer, nothing on the old one.
      const detail = (await call("GET", `/v2/payments/${payment}/`, { headers: client.headers })).json;
      expect(detail.events).toHaveLength(MAX_EVENTS);
      const keys = await env
        .SHARD_B!.prepare("select count(*) as n from idempotency_keys where account_id = ?1 and status = 201")
        .bind(account.id)
        .first<{ n: number }>();
      expect(keys!.n).toBe(2000 + answered.length);
      const invoicesOnB = await env.SHARD_B!.prepare("select count(*) as n from invoices where account_id = ?1").bind(account.id).first<{ n: number }>();
      expect(invoicesOnB!.n).toBe(20 + answered.length - (MAX_EVENTS - 1));
      for (const table of ["idempotency_keys", "invoices", "payments"]) {
        expect((await env.SHARD_A!.prepare(`select count(*) as n from ${table} where account_id = ?1`).bind(account.id).first<{ n: number }>())!.n).toBe(0);
      }
    },
    LONG,
  );
});
