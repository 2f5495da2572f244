// `npm run capacity`: what a payment costs one shard, measured from the database itself. Loads a mix
// into a fresh local state through the API (`wrangler dev`, SERVER_TIMING on) with a receiver that
// answers 200, waits for every delivery to end, then reads D1's own size (`meta.size_after`) while it
// drops each index and table of a throwaway copy: the bytes each one held.
//
//   npm run capacity                                   the example mix: 300 payments, 4 events each
//   npm run capacity -- --payments 1000 --events 9     its size and its events per payment
//   npm run capacity -- --subscriptions 4 --all-details   every subscription `all_payment_details`
//   npm run capacity -- --concurrency 1 --pause-ms 1100   one change at a time, a pause after each
//   npm run capacity -- --ordering per_payment          every subscription ordered per payment
//
// A delivery's cost is the queue consumer's: its batches' D1 round trips, queries, rows read and
// written and SQL time (the development layer's log line, SERVER_TIMING on), over the deliveries.
//
// The payment counts are folded after the answers (src/services/counts/payments.ts): each fold logs
// what it wrote, and the run shares that out over the changes. How much a fold takes in depends on
// the pace: 8 requests at a time by default.
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { getPlatformProxy } from "wrangler";
import { migrateAll, shardNames } from "../lib/d1.mjs";
import { stopGroup } from "../lib/process-group.mjs";
import { BENCH_VARS, freePort, invocationFigures, ROOT, startWrangler, undoAtExit } from "../lib/service.mjs";
import { shardFigures } from "./figures.mjs";

const { values } = parseArgs({
  options: {
    payments: { type: "string", default: "300" },
    events: { type: "string", default: "4" },
    subscriptions: { type: "string", default: "" },
    "all-details": { type: "boolean", default: false },
    "description-length": { type: "string", default: "24" },
    "retention-days": { type: "string", default: "30" },
    concurrency: { type: "string", default: "8" },
    "pause-ms": { type: "string", default: "0" },
    ordering: { type: "string", default: "none" },
  },
});
const PAYMENTS = Number(values.payments);
const EVENTS = Number(values.events);
const RETENTION_DAYS = Number(values["retention-days"]);

/** The example mix: one JSON with the whole detail, one JSON with status, events and invoice ids, one form body. */
const EXAMPLE_MIX = [
  { content_type: "application/json", all_payment_details: true },
  { content_type: "application/json", payment_status: true, payment_events: true, invoice_ids: true },
  { content_type: "application/x-www-form-urlencoded", payment_status: true, instrument_number: true },
];
const mix = values["all-details"]
  ? Array.from({ length: Number(values.subscriptions || 4) }, () => ({ content_type: "application/json", all_payment_details: true }))
  : EXAMPLE_MIX.slice(0, Number(values.subscriptions || EXAMPLE_MIX.length));

/** Each payment's events after its creation: in progress, notes, then settled. */
function eventsOf(p) {
  const note = "x".repeat(Math.max(1, Number(values["description-length"])));
  return Array.from({ length: EVENTS }, (_, i) => {
    if (i === 0) return { event_code: "PU10", description: `Sent ${note}`, status: "in-progress", instrument_number: `ACH-${p}` };
    if (i === EVENTS - 1 && EVENTS > 1) return { event_code: "PU30", description: `Settled ${note}`, status: "settled" };
    return { event_code: "PU15", description: `Note ${i} ${note}` };
  });
}

const state = mkdtempSync(join(tmpdir(), "payments-capacity-"));
undoAtExit(() => rmSync(state, { recursive: true, force: true }));
const failed = migrateAll({ persistTo: state });
if (failed.length > 0) throw new Error(`migrations: ${failed.map((f) => f.output).join("\n")}`);

const receiver = spawn(process.execPath, ["tools/receiver/index.mjs", "--port-line"], { cwd: ROOT, stdio: ["ignore", "pipe", "inherit"], detached: true });
undoAtExit(() => receiver.exitCode === null && process.kill(-receiver.pid, "SIGKILL"));
const receiverPort = await new Promise((done) => receiver.stdout.once("data", (line) => done(JSON.parse(String(line).split("\n")[0]).port)));

const service = await startWrangler({ dir: state, port: await freePort(), scheduled: true, env: { VSCODE_INSPECTOR_OPTIONS: "1" }, logLevel: "log" });
const send = async (method, path, headers, body) => {
  const res = await fetch(`${service.base}${path}`, {
    method,
    headers: { ...headers, "content-type": "application/json" },
    body: body && JSON.stringify(body),
  });
  const json = await res.json().catch(() => null);
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return { json, timing: timingOf(res) };
};
function timingOf(res) {
  const header = res.headers.get("server-timing") ?? "";
  const value = (name, key) => Number(new RegExp(`${name};${key}="?([0-9.]+)"?`).exec(header)?.[1] ?? NaN);
  const byTable = /d1-written-by-table;desc="([^"]*)"/.exec(header)?.[1] ?? "";
  const writtenByTable = Object.fromEntries(
    byTable
      .split(" ")
      .filter(Boolean)
      .map((pair) => [pair.slice(0, pair.lastIndexOf(":")), Number(pair.slice(pair.lastIndexOf(":") + 1))]),
  );
  // What the request took of a Worker invocation's limits (src/dev/within-limits.ts).
  const limits = {
    d1Calls: value("d1-calls", "desc"),
    d1Queries: value("cf-d1-queries", "desc"),
    peakConnections: value("cf-connections-peak", "desc"),
    waitedConnections: value("cf-connections-waited", "desc"),
    subrequests: value("cf-subrequests", "desc"),
    largestResultBytes: value("cf-largest-result", "desc"),
    largestValueBytes: value("cf-largest-value", "desc"),
  };
  return { rowsWritten: value("d1-rows-written", "desc"), statements: value("d1-statements", "desc"), sqlMs: value("d1-sql", "dur"), writtenByTable, limits };
}

const admin = { authorization: `Bearer ${BENCH_VARS.ADMIN_TOKEN}` };
// The account on the first shard: the model measures that shard's database alone.
const SHARD = shardNames()[0];
const account = (await send("POST", "/admin/accounts/", admin, { name: "capacity", shard: SHARD })).json;
const userOf = async (role) => {
  const made = (await send("POST", `/admin/accounts/${account.id}/api-users/`, admin, { username: `capacity-${role}`, role })).json;
  return { authorization: `Basic ${Buffer.from(`${made.username}:${made.password}`).toString("base64")}` };
};
const client = await userOf("client");
const processor = await userOf("processor");
for (const [i, flags] of mix.entries()) {
  await send("POST", "/v1/webhooks/", client, {
    event: "payment.changed",
    url: `http://127.0.0.1:${receiverPort}/ok/capacity-${i}`,
    username: "hook-user",
    password: "hook-pass-123",
    ordering: values.ordering,
    ...flags,
  });
}
const buyer = (await send("POST", "/v1/counterparties/", client, { internal_id: "BUY-1", type: "buyer", name: "Acme Retail" })).json;
const supplier = (await send("POST", "/v1/counterparties/", client, { internal_id: "SUP-1", type: "supplier", name: "Northwind Paper" })).json;

const costs = { creation: [], event: [] };
const started = Date.now();
const CONCURRENCY = Number(values.concurrency);
const PAUSE_MS = Number(values["pause-ms"]);
const pause = () => (PAUSE_MS > 0 ? new Promise((done) => setTimeout(done, PAUSE_MS)) : undefined);
let next = 0;
await Promise.all(
  Array.from({ length: CONCURRENCY }, async () => {
    while (next < PAYMENTS) {
      const p = next++;
      const invoice = (
        await send("POST", "/v1/invoices/", client, { invoice_number: `INV-${p}`, buyer_id: buyer.id, supplier_id: supplier.id, amount_cents: 10_000 + p })
      ).json;
      const made = await send("POST", "/v2/payments/", client, {
        originating_counterparty_id: buyer.id,
        receiving_counterparty_id: supplier.id,
        invoice_ids: [invoice.id],
        payment_method: "ach",
      });
      costs.creation.push(made.timing);
      await pause();
      for (const event of eventsOf(p)) {
        costs.event.push((await send("POST", `/v2/payments/${made.json.id}/events/`, processor, event)).timing);
        await pause();
      }
    }
  }),
);
const changes = PAYMENTS * (1 + EVENTS);
const expected = changes * mix.length;
process.stderr.write(
  `capacity: ${PAYMENTS} payments, ${changes} changes in ${((Date.now() - started) / 1000).toFixed(1)} s; waiting for ${expected} deliveries\n`,
);
const deadline = Date.now() + 10 * 60_000;
for (;;) {
  const arrived = await Promise.all(mix.map((_, i) => fetch(`http://127.0.0.1:${receiverPort}/_arrivals/capacity-${i}`).then((r) => r.json())));
  const count = arrived.reduce((sum, list) => sum + list.length, 0);
  if (count >= expected) break;
  if (Date.now() > deadline) throw new Error(`only ${count} of ${expected} deliveries arrived`);
  await new Promise((done) => setTimeout(done, 500));
}
// The attempts' outcomes are recorded just after their answers: give the last ones a moment. A
// cron run folds the payment counts' last changes, which no write asked to fold.
await new Promise((done) => setTimeout(done, 2000));
await fetch(`${service.base}/__scheduled?cron=*+*+*+*+*`);
await new Promise((done) => setTimeout(done, 2000));
// Each fold of the payment counts logs what it wrote (src/services/counts/payments.ts).
const folds = service
  .output()
  .split("\n")
  .filter((line) => line.includes('"counts_folded"'))
  .map((line) => JSON.parse(line.slice(line.indexOf("{"))));
// Each queue batch's and cron run's figures against an invocation's limits, from the layer's lines.
const invocations = invocationFigures(service.output());
await service.stop();
await stopGroup(receiver);

// Bytes by table and index: drop each index, then each table, reading D1's size after each.
const { env, dispose } = await getPlatformProxy({ configPath: join(ROOT, "wrangler.toml"), persist: { path: join(state, "v3") } });
const shard = env[`SHARD_${SHARD}`];
const size = async (sql) => (await shard.prepare(sql).run()).meta.size_after;
const objects = (
  await shard
    .prepare(
      "select type, name, tbl_name from sqlite_master where name not like 'sqlite_%' and name not like '_cf_%' and name <> 'd1_migrations' order by type desc, name",
    )
    .all()
).results;
const total = await size("select 1");
const bytes = [];
let before = total;
for (const { type, name, tbl_name: table } of objects.filter((o) => o.type === "index")) {
  const after = await size(`drop index "${name}"`);
  bytes.push({ table, name, kind: "index", bytes: before - after });
  before = after;
}
// Tables that others refer to go after them (a drop that a foreign key refuses is tried again later).
const tables = objects.filter((o) => o.type === "table").map((o) => o.name);
for (let tries = 0; tables.length > 0 && tries < 1000; tries++) {
  const name = tables.shift();
  const after = await size(`drop table "${name}"`).catch((error) => (/FOREIGN KEY/.test(String(error)) ? null : Promise.reject(error)));
  if (after === null) {
    tables.push(name);
    continue;
  }
  bytes.push({ table: name, name, kind: "table", bytes: before - after });
  before = after;
}
await dispose();

const mean = (list, key) => list.reduce((sum, item) => sum + item[key], 0) / Math.max(1, list.length);
/** Mean rows written per change by each table its statements wrote to (index entries included). */
const byTable = (list) => {
  const tables = [...new Set(list.flatMap((item) => Object.keys(item.writtenByTable)))];
  return Object.fromEntries(
    tables
      .map((table) => [table, list.reduce((sum, item) => sum + (item.writtenByTable[table] ?? 0), 0) / Math.max(1, list.length)])
      .sort((a, b) => b[1] - a[1]),
  );
};
const perChange = Object.fromEntries(
  Object.entries(costs).map(([kind, list]) => [
    kind,
    { rows_written: mean(list, "rowsWritten"), statements: mean(list, "statements"), sql_ms: mean(list, "sqlMs"), rows_written_by_table: byTable(list) },
  ]),
);
const tablesWritten = [...new Set(Object.values(perChange).flatMap((c) => Object.keys(c.rows_written_by_table)))];
// The folds, shared out over every change of the mix.
const foldShare = {
  folds: folds.length,
  rows_written: folds.reduce((sum, fold) => sum + fold.rows_written, 0) / changes,
  sql_ms: folds.reduce((sum, fold) => sum + fold.sql_ms, 0) / changes,
};
const figures = shardFigures({ bytes, payments: PAYMENTS, perChange, eventsPerPayment: EVENTS, foldShare });
/** The most of each figure over a kind's requests. */
const most = (list) => Object.fromEntries(Object.keys(list[0]?.limits ?? {}).map((name) => [name, Math.max(...list.map((item) => item.limits[name]))]));
const limits = {
  "a new payment": { invocations: costs.creation.length, ...most(costs.creation) },
  "an event": { invocations: costs.event.length, ...most(costs.event) },
  ...Object.fromEntries(Object.entries(invocations).map(([handler, f]) => [handler === "queue" ? "a queue batch" : "a cron run", f])),
};
// What one delivery cost its shard's D1: the queue batches' sums over the deliveries made.
const consumed = invocations.queue ?? { totalD1Calls: 0, totals: {} };
const perDelivery = {
  // Queue messages the consumer took per delivery: more than one when a delivery waited, was put off or retried.
  messages: (consumed.totalMessages ?? 0) / expected,
  d1_calls: consumed.totalD1Calls / expected,
  queries: (consumed.totals.d1Queries ?? 0) / expected,
  rows_read: (consumed.totals.d1RowsRead ?? 0) / expected,
  rows_written: (consumed.totals.d1RowsWritten ?? 0) / expected,
  sql_ms: (consumed.totals.d1SqlMs ?? 0) / expected,
};
const deliveriesPerSecond = perDelivery.sql_ms > 0 ? Math.floor(1000 / perDelivery.sql_ms) : null;
const report = {
  at: new Date().toISOString(),
  ordering: values.ordering,
  per_delivery: perDelivery,
  deliveries_per_second_per_shard: deliveriesPerSecond,
  payments: PAYMENTS,
  events_per_payment: EVENTS,
  concurrency: CONCURRENCY,
  pause_ms: PAUSE_MS,
  subscriptions: mix,
  database_bytes: total,
  bytes,
  per_change: perChange,
  fold_share: foldShare,
  limits,
  ...figures,
};

const kb = (n) => (n / 1024).toFixed(2);
const lines = [
  `Capacity: ${PAYMENTS} payments x (creation + ${EVENTS} events), ${mix.length} subscriptions (${mix.map((m) => (m.all_payment_details ? "all details" : m.content_type.includes("form") ? "form" : "JSON")).join(", ")}), ${CONCURRENCY} at a time${PAUSE_MS > 0 ? `, ${PAUSE_MS} ms after each change` : ""}; D1 database ${kb(total)} KB.`,
  "",
  "| Table or index | KB per payment |",
  "|---|---|",
  ...bytes
    .filter((b) => b.bytes > 0)
    .sort((a, b) => b.bytes - a.bytes)
    .map((b) => `| ${b.kind === "index" ? `  ${b.name} (index of ${b.table})` : b.name} | ${kb(b.bytes / PAYMENTS)} |`),
  `| **all** | **${kb(figures.bytes_per_payment)}** |`,
  `| of which the delivery log (deliveries, attempts, their indexes) | ${kb(figures.log_bytes_per_payment)} |`,
  "",
  "| Change | D1 rows written | statements | SQL time (ms, as D1 reports it) |",
  "|---|---|---|---|",
  ...Object.entries(perChange).map(
    ([kind, c]) =>
      `| ${kind === "creation" ? "a new payment" : "an event"} | ${c.rows_written.toFixed(1)} | ${c.statements.toFixed(1)} | ${c.sql_ms.toFixed(3)} |`,
  ),
  `| each change's share of the count folds (${foldShare.folds} folds over ${changes} changes) | ${foldShare.rows_written.toFixed(2)} | | ${foldShare.sql_ms.toFixed(3)} |`,
  "",
  "| Rows written by table (its index entries included) | a new payment | an event |",
  "|---|---|---|",
  ...tablesWritten.map(
    (table) =>
      `| ${table} | ${(perChange.creation.rows_written_by_table[table] ?? 0).toFixed(1)} | ${(perChange.event.rows_written_by_table[table] ?? 0).toFixed(1)} |`,
  ),
  "",
  `One shard (D1's 10 GB): ${figures.payments_per_shard_with_log.toLocaleString("en")} payments with their delivery log (all within RETENTION_DAYS=${RETENTION_DAYS}), ${figures.payments_per_shard_core.toLocaleString("en")} once their log is past retention;`,
  `at the SQL time above (the folds' share included), about ${figures.changes_per_second.toLocaleString("en")} changes a second (D1 runs one query at a time per database).`,
  "",
  `| A delivery (ordering ${values.ordering}), the consumer's D1 over ${expected} deliveries | queue messages | D1 calls | queries | rows read | rows written | SQL time (ms) |`,
  "|---|---|---|---|---|---|---|",
  `| each | ${perDelivery.messages.toFixed(2)} | ${perDelivery.d1_calls.toFixed(2)} | ${perDelivery.queries.toFixed(2)} | ${perDelivery.rows_read.toFixed(1)} | ${perDelivery.rows_written.toFixed(2)} | ${perDelivery.sql_ms.toFixed(3)} |`,
  "",
  `At that SQL time one shard's D1 serves about ${deliveriesPerSecond?.toLocaleString("en") ?? "?"} deliveries a second (one query at a time per database).`,
  "",
  "Against a Worker invocation's limits (Workers Paid), the most over each kind's invocations: D1 round trips, D1 queries (1,000), connections at once (6) and those that waited, subrequests (10,000), the largest D1 result (50 MB) and bound value (2 MB), in bytes.",
  "",
  "| Invocation | count | D1 calls | D1 queries | connections at once | waited | subrequests | largest result | largest value |",
  "|---|---|---|---|---|---|---|---|---|",
  ...Object.entries(limits).map(
    ([kind, f]) =>
      `| ${kind} | ${f.invocations} | ${f.d1Calls} | ${f.d1Queries} | ${f.peakConnections} | ${f.waitedConnections} | ${f.subrequests} | ${f.largestResultBytes} | ${f.largestValueBytes} |`,
  ),
];
console.log(lines.join("\n"));
mkdirSync(join(ROOT, "tools/capacity/results"), { recursive: true });
const file = join("tools/capacity/results", `${report.at.replace(/[:.]/g, "-")}.json`);
writeFileSync(join(ROOT, file), `${JSON.stringify(report, null, 2)}\n`);
console.log(`\nWritten to ${file}.`);
process.exit(0);
