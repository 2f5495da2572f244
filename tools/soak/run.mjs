// The reliability soak: the local service (wrangler dev, on a fresh seeded state) delivering to
// receivers that fail on purpose (tools/receiver/index.mjs in fault mode), with faults injected, until every accepted
// event has reached every healthy subscription. Prints a table and writes tools/soak/results/<time>.json.
//
//   npm run soak                                   10,000 events (2,000 payments x 5), with a SIGKILL
//   npm run soak -- --payments 200 --no-kill       a short run
//   npm run soak -- --fuzz-runs 0                  without the fuzzing that follows the drain (10,000 requests)
//   npm run soak -- --no-move                      without moving the seeded account from shard A to B
//
// Accounts on two shards: the seeded one on A (moved to B once 60% of its events are sent, while
// they go on being sent: docs/interface.md, "Tenancy and authentication"), and a second one on B with its own subscription and payments.
//
// Settings the soak turns on (dev/local-faults.ts; honoured only with local webhook URLs allowed):
// RETRY_TIME_SCALE=0.005 (the retry schedule's 5 min is 1.5 s, its 3 days 21.6 min: with 0.001 the
// scaled 3 days, 4.3 min, ran out while deliveries were put off for a slow receiver on the real clock,
// and 1,213 of 15,000 deliveries ended failed) and QUEUE_SEND_FAILURES=0.05 (5% of the payment writes' queue sends fail; the sweeper recovers them).
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";
import { ACCOUNT, ensureSeeded, SHARD, shape, USERS } from "../bench/seed.mjs";
import { wranglerSync } from "../lib/d1.mjs";
import { BENCH_VARS } from "../lib/service.mjs";
import { startService } from "../bench/service.mjs";
import { stopGroup } from "../lib/process-group.mjs";

const { values } = parseArgs({
  options: {
    payments: { type: "string", default: "2000" },
    "events-per-payment": { type: "string", default: "5" },
    "no-kill": { type: "boolean", default: false },
    // Long enough for the scaled retry window (3 days at 0.005: 1,296 s) to run out.
    "drain-timeout": { type: "string", default: "1800" },
    port: { type: "string", default: "8797" },
    "fuzz-runs": { type: "string", default: "10000" },
    "no-move": { type: "boolean", default: false },
  },
});
const PAYMENTS = Number(values.payments);
const PER_PAYMENT = Number(values["events-per-payment"]);
const CONCURRENCY = 10;
const dir = ".soak/state";
const basic = ({ username, password }) => `Basic ${Buffer.from(`${username}:${password}`).toString("base64")}`;
const CLIENT = { authorization: basic(USERS.client), "content-type": "application/json" };
const PROCESSOR = { authorization: basic(USERS.processor), "content-type": "application/json" };
const log = (...args) => console.error(`[soak ${new Date().toISOString().slice(11, 19)}]`, ...args);
const sleep = (ms) => new Promise((done) => setTimeout(done, ms));

// A fresh state: the seed's account, users and payments, and nothing delivered yet.
rmSync(".soak", { recursive: true, force: true });
const scale = PAYMENTS * 10;
ensureSeeded(scale, dir);
const s = shape(scale);

const receiverProcess = spawn(process.execPath, ["tools/receiver/index.mjs", "--port-line"], { stdio: ["ignore", "pipe", "inherit"], detached: true });
const receiverUrl = `http://127.0.0.1:${JSON.parse(await new Promise((done) => createInterface({ input: receiverProcess.stdout }).once("line", done))).port}`;
const report = (tag) => fetch(`${receiverUrl}/_report/${tag}`).then((r) => r.json());

const vars = { RETRY_TIME_SCALE: "0.005", QUEUE_SEND_FAILURES: "0.05" };
let service = await startService({ dir, port: Number(values.port), vars, scheduled: true });
const base = service.base;
const api = async (method, path, body, headers = CLIENT) => {
  const res = await fetch(`${base}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, json: await res.json().catch(() => null) };
};

// Three subscriptions to flaky receivers, and one whose receiver answers 410.
const FLAKY = ["a", "b", "c"];
const subscribe = async (url) => {
  const res = await api("POST", "/v1/webhooks/", {
    event: "payment.changed",
    url,
    content_type: "application/json",
    username: "soak",
    password: "soak-pass",
    all_payment_details: true,
  });
  if (res.status !== 201) throw new Error(`subscribe: ${res.status} ${JSON.stringify(res.json)}`);
  return res.json.id;
};
const subscriptions = Object.fromEntries(
  await Promise.all(
    [...FLAKY.map((tag) => [tag, `${receiverUrl}/flaky/${tag}`]), ["gone", `${receiverUrl}/gone/x`]].map(async ([tag, url]) => [tag, await subscribe(url)]),
  ),
);

// The second account, on shard B: its own users, parties and subscription (to flaky receiver "d").
const ADMIN = { authorization: `Bearer ${BENCH_VARS.ADMIN_TOKEN}`, "content-type": "application/json" };
const OTHER_SHARD = SHARD === "A" ? "B" : "A";
const must = async (res, what) => {
  if (res.status >= 300) throw new Error(`${what}: ${res.status} ${JSON.stringify(res.json)}`);
  return res.json;
};
const other = await must(await api("POST", "/admin/accounts/", { name: "Soak second shard", shard: OTHER_SHARD }, ADMIN), "second account");
const otherUser = await must(await api("POST", `/admin/accounts/${other.id}/api-users/`, { username: "soak-second", role: "processor" }, ADMIN), "second user");
const OTHER = { authorization: basic(otherUser), "content-type": "application/json" };
const otherParties = await Promise.all(
  ["buyer", "supplier"].map(
    async (type) => (await must(await api("POST", "/v1/counterparties/", { internal_id: `soak-${type}`, type, name: type }, OTHER), type)).id,
  ),
);
const otherSubscription = await must(
  await api(
    "POST",
    "/v1/webhooks/",
    {
      event: "payment.changed",
      url: `${receiverUrl}/flaky/d`,
      content_type: "application/json",
      username: "soak",
      password: "soak-pass",
      all_payment_details: true,
    },
    OTHER,
  ),
  "second subscription",
);
subscriptions.d = otherSubscription.id;
const OTHER_PAYMENTS = Math.max(5, Math.floor(PAYMENTS / 10));
const acceptedOther = []; // the second account's payments' creation event ids

// The cron, every 5 s (wrangler dev fires none by itself).
let sweeps = 0;
const sweeper = setInterval(
  () =>
    fetch(`${base}/__scheduled?cron=*+*+*+*+*`).then(
      () => sweeps++,
      () => {},
    ),
  5_000,
);

// Events: PER_PAYMENT notes (no status change: always legal) on each payment, CONCURRENCY at a time.
const accepted = []; // event ids answered 201
const answers = {};
const jobs = [];
for (let round = 0; round < PER_PAYMENT; round++) for (let p = 0; p < PAYMENTS; p++) jobs.push({ p, round });
const total = jobs.length;
const killAt = values["no-kill"] ? -1 : Math.floor(total * 0.4);
const moveAt = values["no-move"] ? -1 : Math.floor(total * 0.6);
let moved = null;
let killed = null;
let next = 0;
const started = Date.now();
const worker = async () => {
  while (next < jobs.length) {
    const i = next++;
    if (i === killAt) await crashAndRestart();
    if (i === moveAt) await startMove();
    const { p, round } = jobs[i];
    const body = { event_code: "PU15", description: `soak ${p}.${round}` };
    // One key per event, as a careful client sends: a retry after an answer cut off by the kill
    // gets the committed event's answer again instead of recording a second event.
    const headers = { ...PROCESSOR, "idempotency-key": `soak-${p}-${round}` };
    for (;;) {
      const res = await api("POST", `/v2/payments/${s.paymentId(p)}/events/`, body, headers).catch((error) => ({
        status: `error: ${error.cause?.code ?? error.message}`,
      }));
      answers[res.status] = (answers[res.status] ?? 0) + 1;
      if (res.status === 201 && res.json?.id) {
        accepted.push(res.json.id);
        break;
      }
      // A 201 whose body the kill cut off was committed: the same key answers it again (below).
      // 409: the key is still held by the request the kill cut short, until its lock lapses.
      if (typeof res.status === "number" && res.status < 500 && res.status !== 409 && res.status !== 201) break; // refused: nothing to deliver
      await sleep(200); // the service is down or busy: the client retries, as a real one would
    }
  }
};

async function startMove() {
  const res = await api("POST", `/admin/accounts/${ACCOUNT}/move/`, { shard: OTHER_SHARD }, ADMIN);
  log(`moving the seeded account from ${SHARD} to ${OTHER_SHARD}: ${res.status}`);
  moved = { from: SHARD, to: OTHER_SHARD, status: res.status, started_after: accepted.length, started_at: Date.now() };
}

/** The second account's payments, one after another, while the seeded account's events go on. */
async function otherWorker() {
  // Keyed writes, retried through the kill and the service's restart as a client would.
  const persist = async (path, body, key) => {
    for (;;) {
      const res = await api("POST", path, body, { ...OTHER, "idempotency-key": key }).catch((error) => ({
        status: `error: ${error.cause?.code ?? error.message}`,
      }));
      // A 201 whose body the kill cut off was committed: the same key answers it again.
      if (res.status === 201 && res.json) return res.json;
      if (typeof res.status === "number" && res.status < 500 && res.status !== 409 && res.status !== 201)
        throw new Error(`second account: ${path}: ${res.status} ${JSON.stringify(res.json)}`);
      await sleep(200);
    }
  };
  for (let n = 0; n < OTHER_PAYMENTS; n++) {
    const invoice = await persist(
      "/v1/invoices/",
      { invoice_number: `SOAK-${n}`, buyer_id: otherParties[0], supplier_id: otherParties[1], amount_cents: 100 + n },
      `invoice-${n}`,
    );
    const payment = await persist(
      "/v2/payments/",
      { originating_counterparty_id: otherParties[0], receiving_counterparty_id: otherParties[1], invoice_ids: [invoice.id], payment_method: "ach" },
      `payment-${n}`,
    );
    acceptedOther.push(payment.events[0].id);
  }
}

async function crashAndRestart() {
  log(`SIGKILL to the service after ${accepted.length} accepted events`);
  const at = Date.now();
  await service.kill();
  service = await startService({ dir, port: Number(values.port), vars, scheduled: true });
  const up = Date.now();
  // Events go on being posted meanwhile (the clients retry): what the service hands over or
  // leases once started is its own, not lost (src/index.ts, the isolate's first event).
  await fetch(`${base}/__scheduled?cron=%40restart`);
  killed = { accepted_before: accepted.length, restart_ms: up - at };
  log(`restarted in ${up - at} ms`);
}

await Promise.all([...Array.from({ length: CONCURRENCY }, worker), otherWorker()]);
const postedMs = Date.now() - started;
log(`${accepted.length} events accepted in ${(postedMs / 1000).toFixed(1)} s; draining`);

// Drain: until every accepted event reached each flaky subscription with a 2xx, and the move is done.
const expected = new Set(accepted);
const expectedOf = (tag) => (tag === "d" ? new Set(acceptedOther) : expected);
const TAGS = [...FLAKY, "d"];
const missing = async () => {
  const reports = await Promise.all(TAGS.map(report));
  return reports.map((r, i) => [...expectedOf(TAGS[i])].filter((id) => !r.delivered[id]).length);
};
const moveDone = async () => {
  if (!moved) return true;
  const account = await api("GET", `/admin/accounts/${ACCOUNT}/`, undefined, ADMIN);
  if (account.json?.move === null && !moved.done_s) moved = { ...moved, shard_after: account.json.shard, done_s: (Date.now() - moved.started_at) / 1000 };
  return account.json?.move === null;
};
const deadline = Date.now() + Number(values["drain-timeout"]) * 1000;
// A delivery whose every retry failed (with 45% of requests failing, about 0.45^12 of them: a
// couple in 30,000) ends `failed`, kept in the log: not lost. The soak then recovers it, as a
// user would (POST .../recover/), and waits for it like the rest.
const recovered = Object.fromEntries([...FLAKY, "d"].map((tag) => [tag, 0]));
const recoverFailed = async () => {
  for (const tag of TAGS) {
    const as = tag === "d" ? OTHER : CLIENT;
    const failed = await api("GET", `/v1/webhooks/${subscriptions[tag]}/deliveries/?status=failed&page_size=1`, undefined, as);
    if (!failed.json?.count) continue;
    const res = await api("POST", `/v1/webhooks/${subscriptions[tag]}/recover/`, { since: new Date(started - 60_000).toISOString() }, as);
    recovered[tag] += res.json?.recovered ?? 0;
    log(`flaky ${tag}: ${res.json?.recovered} failed deliveries recovered`);
  }
};
let left = await missing();
const settled = async () => {
  const moveOver = await moveDone(); // asked every round, so its time is when it ended
  return moveOver && left.every((n) => n === 0);
};
while (!(await settled()) && Date.now() < deadline) {
  await sleep(5_000);
  await recoverFailed();
  left = await missing();
  log(`missing per subscription: ${left.join(", ")}`);
}
const drainedMs = Date.now() - started;
clearInterval(sweeper);
await sleep(3_000); // let attempts in flight be recorded

// The delivery logs against what the receivers got.
async function logged(subscriptionId, as = CLIENT) {
  let url = `/v1/webhooks/${subscriptionId}/deliveries/?page_size=1000`;
  const counts = { deliveries: 0, attempts: 0, interrupted: 0, in_progress: 0, succeeded: 0, failed: 0, pending: 0, pendingEvents: new Set() };
  while (url) {
    const page = await api("GET", url.replace(base, ""), undefined, as);
    for (const delivery of page.json.results) {
      counts.deliveries++;
      counts[delivery.status]++;
      if (delivery.status === "pending") counts.pendingEvents.add(delivery.event_id);
      counts.attempts += delivery.attempts.length;
      counts.interrupted += delivery.attempts.filter((a) => a.error?.startsWith("interrupted")).length;
      counts.in_progress += delivery.attempts.filter((a) => a.error === "in progress").length;
    }
    url = page.json.next;
  }
  return counts;
}
const rows = [];
for (const tag of TAGS) {
  const r = await report(tag);
  const l = await logged(subscriptions[tag], tag === "d" ? OTHER : CLIENT);
  const wanted = expectedOf(tag);
  const undelivered = [...wanted].filter((id) => !r.delivered[id]);
  // Not there yet, but pending in the log: still on its retry schedule when the drain timed out.
  const retrying = undelivered.filter((id) => l.pendingEvents.has(id)).length;
  const { pendingEvents, ...counts } = l;
  rows.push({
    subscription: tag === "d" ? `flaky d (second account, shard ${OTHER_SHARD})` : `flaky ${tag}`,
    expected: wanted.size,
    delivered: wanted.size - undelivered.length,
    lost: undelivered.length - retrying,
    still_retrying: retrying,
    failed_then_recovered: recovered[tag],
    duplicates: r.duplicates,
    sequence_highest: r.sequence.highest,
    sequence_gaps: r.sequence.gaps.length,
    attempts_logged: l.attempts,
    requests_received: r.requests,
    interrupted: l.interrupted,
    answered: r.answered,
    log: counts,
  });
}
const gone = await api("GET", `/v1/webhooks/${subscriptions.gone}/`);
const goneReport = await report("x");
const result = {
  at: new Date().toISOString(),
  payments: PAYMENTS,
  events_sent: total,
  events_accepted: accepted.length,
  answers,
  kill: killed,
  settings: vars,
  sweeps,
  post_s: postedMs / 1000,
  drain_s: drainedMs / 1000,
  gone: { is_active: gone.json.is_active, requests_received: goneReport.requests },
  subscriptions: rows,
};

await service.stop();
await stopGroup(receiverProcess);

// The moved account's rows left on the shard it left, counted in the database file itself.
if (moved) {
  const tables = [
    "tenants:id",
    "counterparties",
    "invoices",
    "payments",
    "webhook_subscriptions",
    "webhook_deliveries",
    "list_counts",
    "time_counts",
    "idempotency_keys",
  ];
  const sum = tables
    .map((entry) => {
      const [table, column = "account_id"] = entry.split(":");
      return `(select count(*) from ${table} where ${column} = '${ACCOUNT}')`;
    })
    .join(" + ");
  const counted = wranglerSync(["d1", "execute", `SHARD_${SHARD}`, "--local", "--persist-to", dir, "--json", "--command", `select ${sum} as n`]);
  moved.rows_left_on_old_shard = counted.status === 0 ? JSON.parse(counted.stdout)[0].results[0].n : `unreadable: ${counted.stderr}`;
  const arrived = wranglerSync([
    "d1",
    "execute",
    `SHARD_${OTHER_SHARD}`,
    "--local",
    "--persist-to",
    dir,
    "--json",
    "--command",
    `select count(*) as n from payments where account_id = '${ACCOUNT}'`,
  ]);
  moved.payments_on_new_shard = arrived.status === 0 ? JSON.parse(arrived.stdout)[0].results[0].n : `unreadable: ${arrived.stderr}`;
}
result.move = moved;

// Fuzzing, at length: test/fuzz.test.ts in the Workers runtime with FUZZ_RUNS random requests
// (every operation of the OpenAPI document, every kind of caller): never a 5xx, every error in
// the API's error shape (docs/interface.md, "Errors"). CI runs a few hundred of them.
const fuzzRuns = Number(values["fuzz-runs"]);
if (fuzzRuns > 0) {
  log(`fuzzing: ${fuzzRuns} random requests`);
  const fuzzStarted = Date.now();
  const fuzz = spawnSync("node_modules/.bin/vitest", ["run", "test/fuzz.test.ts"], {
    env: { ...process.env, FUZZ_RUNS: String(fuzzRuns), CLOUDFLARE_CF_FETCH_ENABLED: "false", WRANGLER_SEND_METRICS: "false" },
    encoding: "utf8",
  });
  result.fuzz = { runs: fuzzRuns, passed: fuzz.status === 0, seconds: Math.round((Date.now() - fuzzStarted) / 1000) };
  if (fuzz.status !== 0) console.error(fuzz.stdout, fuzz.stderr);
}

mkdirSync("tools/soak/results", { recursive: true });
const file = `tools/soak/results/${result.at.replace(/[:.]/g, "-")}.json`;
writeFileSync(file, JSON.stringify(result, null, 2));

console.log(
  [
    `Soak: ${accepted.length} of ${total} events accepted (answers ${JSON.stringify(answers)}), ${killed ? `SIGKILL after ${killed.accepted_before} accepted, restarted in ${(killed.restart_ms / 1000).toFixed(1)} s` : "no kill"}; ` +
      `settings ${JSON.stringify(vars)}; drained ${(drainedMs / 1000).toFixed(0)} s after the first event.`,
    moved
      ? `Move of the seeded account ${moved.from} → ${moved.to}: started after ${moved.started_after} accepted events (${moved.status}), done in ${moved.done_s?.toFixed(0) ?? "NOT DONE"} s, on shard ${moved.shard_after ?? "?"} after it with ${moved.payments_on_new_shard} of its ${s.payments} payments there, ${moved.rows_left_on_old_shard} of its rows left on ${moved.from}.`
      : "No move (--no-move).",
    "",
    "| Subscription | deliveries expected | delivered | lost | still retrying at the drain timeout | failed, then recovered | duplicates seen | highest hook-sequence | sequence gaps | attempts logged | requests received | attempts interrupted |",
    "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ...rows.map(
      (r) =>
        `| ${r.subscription} | ${r.expected} | ${r.delivered} | ${r.lost} | ${r.still_retrying} | ${r.failed_then_recovered} | ${r.duplicates} | ${r.sequence_highest} | ${r.sequence_gaps} | ${r.attempts_logged} | ${r.requests_received} | ${r.interrupted} |`,
    ),
    `| 410 subscription | deactivated: ${gone.json.is_active === false ? "yes" : "NO"} | | | | | | | | | ${goneReport.requests} | |`,
    "",
    result.fuzz
      ? `Fuzzing: ${result.fuzz.runs.toLocaleString("en")} random requests over every operation and caller, ${result.fuzz.passed ? "no 5xx and every error in the API's shape" : "FAILED (above)"} (${result.fuzz.seconds} s).`
      : "Fuzzing: skipped (--fuzz-runs 0).",
    "",
    `Written to ${file}.`,
  ].join("\n"),
);
// Lost, not drained in time (still retrying), or a gap in a subscription's sequence fails the run.
const moveFailed = moved !== null && (moved.shard_after !== moved.to || moved.rows_left_on_old_shard !== 0 || moved.payments_on_new_shard !== s.payments);
process.exit(
  rows.some((r) => r.lost > 0 || r.still_retrying > 0 || r.sequence_gaps > 0 || r.sequence_highest !== r.expected) ||
    moveFailed ||
    gone.json.is_active !== false ||
    result.fuzz?.passed === false
    ? 1
    : 0,
);
