// `npm run bench`: seeds (or reuses) a local D1 state at --scale, runs the service in the mode
// tools/bench/service.mjs names, loads it with autocannon scenario by scenario at each concurrency, and
// prints a Markdown table (also written to tools/bench/results/<timestamp>.json).
//
//   npm run bench -- --scale 1000000 --duration 10 --concurrency 1,10,50
//   npm run bench -- --smoke          (CI: a small scale, one second a scenario at 10 at a time; numbers not judged)
import autocannon from "autocannon";
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { ensureSeeded, shape, USERS } from "./seed.mjs";
import { MODE, runState, startService } from "./service.mjs";
import { distanceScenario, distanceTables } from "./distance.mjs";
import { drainScenario } from "./drain.mjs";
import { baselineScenario, removeSubscriptions, startBaseline, startHookReceiver, webhookScenarios } from "./webhooks.mjs";

const { values } = parseArgs({
  options: {
    scale: { type: "string", default: "1000000" },
    duration: { type: "string", default: "10" },
    concurrency: { type: "string", default: "1,10,50" },
    port: { type: "string", default: "8799" },
    only: { type: "string" },
    smoke: { type: "boolean", default: false },
    "state-on-disk": { type: "boolean", default: false },
  },
});
const scale = values.smoke ? 1000 : Number(values.scale);
const duration = values.smoke ? 1 : Number(values.duration);
const concurrencies = values.smoke ? [10] : values.concurrency.split(",").map(Number);
const seeded = `.bench/state-${scale}`;
const auth = (user) => `Basic ${Buffer.from(`${user.username}:${user.password}`).toString("base64")}`;
const CLIENT = { authorization: auth(USERS.client) };
const PROCESSOR = { authorization: auth(USERS.processor), "content-type": "application/json" };
const iso = (ms) => new Date(ms).toISOString();

const seededMs = ensureSeeded(scale, seeded);
console.error(seededMs ? `Seeded scale ${scale} in ${(seededMs / 1000).toFixed(1)} s.` : `Reusing ${seeded}.`);
const state = runState(seeded, { onDisk: values["state-on-disk"] });
const dir = state.dir;
const mode = `${MODE}, ${state.where}`;
// A scenario that throws ends the run; the service and the state's copy do not outlive it
// (service.mjs undoes both at exit).
const service = await startService({ dir, port: Number(values.port) });
await removeSubscriptions(service.base, CLIENT);

/** Follows `next` links `hops` times from `path`; returns the URL of the page reached. */
async function pageByLinks(path, hops) {
  let url = `${service.base}${path}`;
  for (let i = 0; i < hops; i++) {
    const next = (await (await fetch(url, { headers: CLIENT })).json()).next;
    if (!next) break;
    url = next;
  }
  return url.slice(service.base.length);
}

const s = shape(scale);
const pageSize = 100;
const deepPage = Math.min(1000, Math.floor(s.invoices / pageSize / 2));
const offsetPage = Math.max(2, Math.floor(s.invoices / pageSize / 2));
const polled = Math.floor(s.payments * 0.216);

const DETAIL_PATH = `/v2/payments/${s.paymentId(Math.floor(s.payments / 2))}/`;
const reads = [
  ["payment detail", DETAIL_PATH],
  // No credentials and no D1: what the local runtime's request path alone allows (the ceiling of every other row).
  ["healthz (no auth, no D1)", "/healthz"],
  ["invoices, no filter", "/v1/invoices/"],
  ["invoices by 3 invoice_numbers", `/v1/invoices/?invoice_number=INV-1&invoice_number=INV-${Math.floor(scale / 2)}&invoice_number=INV-${scale - 1}`],
  ["counterparties by 2 internal_ids", "/v1/counterparties/?internal_id=BUY-1&internal_id=SUP-2"],
  [`counterparties by type (${s.buyers.toLocaleString("en")} match)`, "/v1/counterparties/?type=supplier"],
  [`payments by status (${Math.ceil(s.payments / 4).toLocaleString("en")} match)`, "/v2/payments/?status=pending"],
  ["payments by counterparty", `/v2/payments/?receiving_counterparty_id=${s.supplierId(1)}`],
  [`payments by status + created range`, `/v2/payments/?status=pending&created__gte=${iso(s.invoiceAt(Math.floor(s.payments / 2)))}`],
  [
    `payments polling, ordering=updated (${polled.toLocaleString("en")} match)`,
    `/v2/payments/?ordering=updated&updated__gt=${iso(s.paymentUpdatedAt(s.payments - polled - 1))}`,
  ],
  [
    `invoices by created range (${Math.ceil(s.invoices / 2).toLocaleString("en")} match)`,
    `/v1/invoices/?created__gte=${iso(s.invoiceAt(Math.floor(s.invoices / 2)))}`,
  ],
  [`invoices ?page=${offsetPage} (offset)`, `/v1/invoices/?page=${offsetPage}`],
  ["invoices page 2 by next link", await pageByLinks("/v1/invoices/", 1)],
  [`invoices page ${deepPage + 1} by next links`, await pageByLinks("/v1/invoices/", deepPage)],
].filter(([name]) => !values.only || name.includes(values.only));

/**
 * One request outside the load, for its status, the D1 rows it read, and what it took of a Worker
 * invocation's limits as the development layer counted them (src/dev/within-limits.ts). (The
 * load's own answers are checked by autocannon: non-2xx.)
 */
async function probe(path, init = {}) {
  const res = await fetch(`${service.base}${path}`, { headers: CLIENT, ...init });
  await res.arrayBuffer();
  const timing = res.headers.get("server-timing") ?? "";
  const figure = (name) => {
    const match = new RegExp(`${name};desc="(\\d+)"`).exec(timing);
    return match ? Number(match[1]) : null;
  };
  const rowsRead = figure("d1-rows-read");
  const limits = {
    d1_calls: figure("d1-calls"),
    d1_replica_calls: figure("cf-d1-replica-calls"),
    d1_queries: figure("cf-d1-queries"),
    connections_peak: figure("cf-connections-peak"),
    connections_waited: figure("cf-connections-waited"),
    subrequests: figure("cf-subrequests"),
    largest_result_bytes: figure("cf-largest-result"),
    largest_value_bytes: figure("cf-largest-value"),
  };
  limitsByKind.set(path.replace(/pmt_\d+/, "pmt_…").replace(/webhooks\/[^/]+/, "webhooks/{id}"), limits);
  return { status: res.status, rowsRead };
}
/** Each probed request kind's figures against a Worker invocation's limits. */
const limitsByKind = new Map();

/** `sorted`'s q-quantile (0..1), nearest rank. */
/** `rate` as a ratio to `to`, to two decimals (null without `to`). */
const ratio = (rate, to) => (to ? Math.round((rate / to) * 100) / 100 : null);
const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? null;

/** Loads the service with autocannon for `seconds`; returns its counts and every response's time (ms). */
async function slice({ path, ...options }, connections, seconds) {
  const times = [];
  const run = autocannon({ url: `${service.base}${path}`, connections, duration: seconds, ...options });
  run.on("response", (_client, _status, _bytes, ms) => times.push(ms));
  const result = await run;
  return {
    total: result.requests.total,
    seconds: result.duration,
    times,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    status503: result.statusCodeStats?.["503"]?.count ?? 0,
  };
}

/** The figures of a scenario's slices taken together: req/s over their whole time, latency percentiles over every response. */
function figuresOf(slices, connections) {
  const total = slices.reduce((sum, s) => sum + s.total, 0);
  const seconds = slices.reduce((sum, s) => sum + s.seconds, 0);
  const times = slices.flatMap((s) => s.times).sort((a, b) => a - b);
  return {
    connections,
    requests_per_s: Math.round((total / seconds) * 10) / 10,
    p50_ms: Math.round(quantile(times, 0.5) ?? 0),
    p99_ms: Math.round(quantile(times, 0.99) ?? 0),
    non_2xx: slices.reduce((sum, s) => sum + s.non2xx, 0),
    errors: slices.reduce((sum, s) => sum + s.errors, 0),
    status_503: slices.reduce((sum, s) => sum + s.status503, 0),
  };
}

/**
 * A scenario at `connections`, with the payment detail's rate measured in turns with it: SLICES
 * times the detail for a tenth of the duration, then the scenario for a fifth. This machine's
 * speed drifts by a third within minutes; in turns, the drift weighs on both alike, and the
 * ratio measures the scenario, not the moment. Slices of under a second (the smoke) are one turn.
 */
const SLICES = duration >= 5 ? 5 : 1;
async function pairedLoad(options, connections) {
  const detailSlices = [];
  const slices = [];
  for (let turn = 0; turn < SLICES; turn++) {
    detailSlices.push(await slice({ path: DETAIL_PATH, headers: CLIENT }, connections, Math.max(1, duration / 2 / SLICES)));
    slices.push(await slice(options, connections, duration / SLICES));
  }
  // Each turn's own ratio, for the spread: how far one turn's reading strays from the sums'.
  const rate = (piece) => piece.total / piece.seconds;
  const turns = slices.map((piece, turn) => ratio(rate(piece), rate(detailSlices[turn])));
  return {
    ...figuresOf(slices, connections),
    detail_paired_per_s: figuresOf(detailSlices, connections).requests_per_s,
    vs_detail_turns: [Math.min(...turns), Math.max(...turns)],
  };
}

const rows = [];
for (const [name, path] of reads) {
  const { status, rowsRead } = await probe(path);
  if (status !== 200) throw new Error(`${name}: ${path} answered ${status}`);
  for (const connections of concurrencies) {
    const measured =
      path === DETAIL_PATH
        ? figuresOf([await slice({ path, headers: CLIENT }, connections, duration)], connections)
        : await pairedLoad({ path, headers: CLIENT }, connections);
    rows.push({ scenario: name, path, rows_read: rowsRead, ...measured });
    console.error(`${name} @${connections}: ${rows.at(-1).requests_per_s} req/s`);
  }
}

// Writes: events without a status (always allowed) on many payments of the account, then on one.
// They write to payments the read scenarios' pages do not show (the later part of the table, by
// created), so that reused data reads the same from run to run.
const note = JSON.stringify({ event_code: "PU15", description: "Bench note", instrument_number: "TR-bench" });
const firstWritten = Math.floor(s.payments * 0.6);
let next = 0;
// "One payment" is the contention of every connection on the same payment. A payment takes at
// most 100 events (the API's cap), so all connections move together to the next payment of a
// pool every ONE_PAYMENT_EVENTS requests; the pool is payments with few events, from a random
// start in their own part of the table (the many-payments scenario writes to the last 40%).
const ONE_PAYMENT_EVENTS = 50;
let oneIndex = 0;
const onePool = values.only && !"events on one payment".includes(values.only) ? [] : await fewEventPayments(Math.floor(s.payments * 0.55), firstWritten, 200);
const writes = [
  ["events on many payments", () => `/v2/payments/${s.paymentId(firstWritten + (next++ % (s.payments - firstWritten - 1)))}/events/`],
  ["events on one payment", () => `/v2/payments/${onePool[Math.floor(oneIndex++ / ONE_PAYMENT_EVENTS) % onePool.length]}/events/`],
].filter(([name]) => !values.only || name.includes(values.only));

/** Up to `wanted` payment ids in [from, to) with at most 20 events, walked from a random start. */
async function fewEventPayments(from, to, wanted) {
  const found = [];
  const start = Math.floor(Math.random() * (to - from));
  for (let i = 0; i < to - from && found.length < wanted; i++) {
    const id = s.paymentId(from + ((start + i) % (to - from)));
    const res = await fetch(`${service.base}/v2/payments/${id}/`, { headers: CLIENT });
    if (res.status === 200 && (await res.json()).events.length <= 20) found.push(id);
  }
  if (found.length === 0) throw new Error("no payment with few events left for the one-payment scenario");
  return found;
}
for (const [name, pathOf] of writes) {
  const { rowsRead } = await probe(pathOf(), { method: "POST", headers: PROCESSOR, body: note });
  for (const connections of concurrencies) {
    const options = {
      path: pathOf(),
      method: "POST",
      headers: PROCESSOR,
      body: note,
      requests: [{ setupRequest: (request) => ({ ...request, path: pathOf() }) }],
    };
    rows.push({ scenario: name, path: pathOf().replace(/pmt_\d+/, "pmt_…"), rows_read: rowsRead, ...(await pairedLoad(options, connections)) });
    console.error(`${name} @${connections}: ${rows.at(-1).requests_per_s} req/s`);
  }
}

// Webhooks: deliveries timed at a receiver, then the bare consumer baseline on the same queue settings.
const hooks = [];
/** The baseline sends as many messages as the burst delivers (or 15,000, the burst's count at full size). */
const smokeOr = (rows) => rows.find((row) => row.scenario.startsWith("burst"))?.deliveries_expected ?? (values.smoke ? 300 : 15000);
let peakRss = 0;
let rssSamples = [];
/** Queue batches' and cron runs' figures against an invocation's limits, per service the run started. */
const invocations = [];
// `--only webhooks` runs every webhook scenario; `--only webhooks:burst` (or :sustained, :trickle, :fairness, :ordering, :replay, :isolation, :drain) one.
if (!values.only || values.only.startsWith("webhooks")) {
  const pick = values.only?.split(":")[1];
  const receiver = await startHookReceiver();
  const log = (row) => console.error(`${row.scenario}: ${row.deliveries_per_s} deliveries/s, p99 ${row.e2r_p99_ms ?? "-"} ms`);
  try {
    // A read measured mid-way (a subscription's stats after the burst) joins the read table.
    const measureRead = async (name, path) => {
      const { status, rowsRead } = await probe(path);
      if (status !== 200) throw new Error(`${name}: ${path} answered ${status}`);
      for (const connections of concurrencies) {
        rows.push({
          scenario: name,
          path: path.replace(/webhooks\/[^/]+/, "webhooks/{id}"),
          rows_read: rowsRead,
          ...(await pairedLoad({ path, headers: CLIENT }, connections)),
        });
      }
      console.error(`${name}: ${rows.at(-1).requests_per_s} req/s, ${rowsRead} rows read`);
    };
    hooks.push(
      ...(await webhookScenarios({
        pick,
        base: service.base,
        headers: CLIENT,
        processor: PROCESSOR,
        paymentId: s.paymentId,
        payments: s.payments,
        smoke: values.smoke,
        receiver,
        log,
        measureRead,
        invocations: service.invocations,
      })),
    );
  } finally {
    peakRss = service.peakRssBytes();
    rssSamples = service.rssSamples();
    invocations.push(["the webhook scenarios' service", service.invocations()]);
    await service.stop();
  }
  // The pipeline's own pace, on its own service (restarted twice on the same state).
  if (!pick || pick === "drain") {
    try {
      hooks.push(
        await drainScenario({
          dir,
          port: Number(values.port),
          receiver,
          headers: CLIENT,
          processor: PROCESSOR,
          paymentId: s.paymentId,
          payments: s.payments,
          smoke: values.smoke,
          log,
        }),
      );
    } catch (error) {
      await receiver.stop();
      throw error;
    }
  }
  const baseline = await startBaseline({ port: Number(values.port) + 1, dir });
  try {
    hooks.push(await baselineScenario({ baseline, receiver, count: smokeOr(hooks), log }));
  } finally {
    await baseline.stop();
    await receiver.stop();
  }
  const bare = hooks.at(-1).deliveries_per_s;
  for (const row of hooks) row.vs_baseline = bare ? Math.round((row.deliveries_per_s / bare) * 100) / 100 : null;
} else {
  peakRss = service.peakRssBytes();
  rssSamples = service.rssSamples();
  invocations.push(["the service", service.invocations()]);
  await service.stop();
}
for (const row of hooks) if (row.invocations) invocations.push([row.scenario.split(":")[0], row.invocations]);
// Latency at a distance (tools/bench/distance.mjs), on services of its own: `--only distance` runs it alone.
const distance =
  !values.only || values.only === "distance"
    ? await distanceScenario({
        dir,
        port: Number(values.port) + 2,
        client: CLIENT,
        processor: PROCESSOR,
        s,
        smoke: values.smoke,
        log: (line) => console.error(line),
      })
    : null;
// Memory over the run: the median RSS of its first and last tenth, and the peak.
const tenth = (from) => {
  const part = rssSamples.slice(from, from + Math.max(1, Math.floor(rssSamples.length / 10))).sort((a, b) => a - b);
  return Math.round((part[Math.floor(part.length / 2)] ?? 0) / 2 ** 20);
};
const memory = {
  first_tenth_mib: tenth(0),
  last_tenth_mib: tenth(Math.max(0, rssSamples.length - Math.max(1, Math.floor(rssSamples.length / 10)))),
  peak_mib: Math.round(peakRss / 2 ** 20),
};

// Each scenario's rate as a ratio to the payment detail's at the same concurrency, in this run:
// the detail measured just before it (vs_detail), and the detail scenario at the run's start
// (vs_first_detail).
const detail = new Map(rows.filter((row) => row.scenario === "payment detail").map((row) => [row.connections, row.requests_per_s]));
for (const row of rows) {
  row.vs_first_detail = ratio(row.requests_per_s, detail.get(row.connections));
  row.vs_detail = row.detail_paired_per_s === undefined ? row.vs_first_detail : ratio(row.requests_per_s, row.detail_paired_per_s);
}

const machine = `${cpus().length} cores (${cpus()[0]?.model ?? "unknown"}), ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
const platform = Object.fromEntries(limitsByKind);
const report = {
  at: new Date().toISOString(),
  scale,
  duration_s: duration,
  mode,
  machine,
  peak_rss_mib: memory.peak_mib,
  memory,
  shape: { invoices: s.invoices, counterparties: s.counterparties, payments: s.payments },
  rows,
  webhooks: hooks,
  platform,
  invocations,
  distance,
};
mkdirSync("tools/bench/results", { recursive: true });
// Smoke and partial runs are kept out of git (see .gitignore); a full run's file is the record.
const suffix = values.smoke ? "-smoke" : values.only ? "-partial" : "";
const file = join("tools/bench/results", `${report.at.replace(/[:.]/g, "-")}${suffix}.json`);
writeFileSync(file, JSON.stringify(report, null, 2));

const table = [
  `Scale ${scale.toLocaleString("en")} invoices, ${s.counterparties.toLocaleString("en")} counterparties, ${s.payments.toLocaleString("en")} payments; ${duration} s a run; ${mode}; ${machine}; service RSS ${memory.first_tenth_mib} MiB in the run's first tenth, ${memory.last_tenth_mib} MiB in its last, peak ${memory.peak_mib} MiB.`,
  "",
  "Ratios: `vs detail` to the payment detail measured in turns with the scenario (5 turns of the detail for a tenth of the duration, then the scenario for a fifth) at the same concurrency, over the sums of the turns; `turns` the lowest and highest of the turns' own ratios; `vs first` to the detail scenario at the start of the run.",
  "",
  "| Scenario | conc. | req/s | vs detail | turns | detail in turns, req/s | vs first | p50 ms | p99 ms | non-2xx | 503 | D1 rows read |",
  "|---|---|---|---|---|---|---|---|---|---|---|---|",
  ...rows.map(
    (r) =>
      `| ${r.scenario} | ${r.connections} | ${r.requests_per_s} | ${r.vs_detail?.toFixed(2) ?? ""} | ${r.vs_detail_turns?.map((v) => v.toFixed(2)).join("–") ?? ""} | ${r.detail_paired_per_s ?? ""} | ${r.vs_first_detail?.toFixed(2) ?? ""} | ${r.p50_ms} | ${r.p99_ms} | ${r.non_2xx} | ${r.status_503} | ${r.rows_read ?? ""} |`,
  ),
  "",
  ...(hooks.length
    ? [
        "| Webhook scenario | events/s accepted | non-2xx | delivered / expected | duplicates | deliveries/s | vs bare consumer | event-to-receipt p50 ms | p99 ms | drain s |",
        "|---|---|---|---|---|---|---|---|---|---|",
        ...hooks.map(
          (h) =>
            `| ${h.scenario}${h.d1_queries_per_delivery != null ? ` (a delivery: ${h.d1_calls_per_delivery} D1 calls, ${h.d1_queries_per_delivery} queries)` : ""}${h.vs_unordered != null ? ` (${h.vs_unordered} of the unordered rate)` : ""}${h.vs_healthy_ordered != null ? ` (${h.vs_healthy_ordered} of the healthy ordered rate)` : ""}${h.vs_healthy_third != null ? ` (${h.vs_healthy_third} of the rate beside a healthy third; ${h.hanging_attempts_started} hanging attempts)` : ""}${h.other_account ? ` (account B's trickle meanwhile: ${h.other_account.delivered} / ${h.other_account.events} delivered, event-to-receipt p50 ${h.other_account.e2r_p50_ms} ms, p99 ${h.other_account.e2r_p99_ms} ms, max ${h.other_account.e2r_max_ms} ms)` : ""} | ${h.events_per_s ?? ""} | ${h.non_2xx ?? ""} | ${h.delivered} / ${h.deliveries_expected ?? h.delivered} | ${h.duplicates ?? ""} | ${h.deliveries_per_s} | ${h.vs_baseline?.toFixed(2) ?? ""} | ${h.e2r_p50_ms ?? ""} | ${h.e2r_p99_ms ?? ""} | ${h.drain_s ?? ""} |`,
        ),
        "",
      ]
    : []),
  "Each request kind against a Worker invocation's limits (Workers Paid), as the development layer counted one request of it: D1 round trips (and those a read replica may serve, by D1's Sessions API), D1 queries (1,000), connections waiting at once (6) and how many had to wait, subrequests (10,000), the largest D1 result (50 MB) and bound value (2 MB), in bytes.",
  "",
  "| Request | D1 calls | of them a replica may serve | D1 queries | connections at once | waited | subrequests | largest result | largest value |",
  "|---|---|---|---|---|---|---|---|---|",
  ...Object.entries(platform).map(
    ([path, f]) =>
      `| ${path} | ${f.d1_calls ?? ""} | ${f.d1_replica_calls ?? ""} | ${f.d1_queries ?? ""} | ${f.connections_peak ?? ""} | ${f.connections_waited ?? ""} | ${f.subrequests ?? ""} | ${f.largest_result_bytes ?? ""} | ${f.largest_value_bytes ?? ""} |`,
  ),
  "",
  "Queue batches (`queue`) and cron runs (`scheduled`), the most of each figure over the invocations of each service the run started, and a queue batch's D1 round trips per message over all of them (the consumer and the cron work on the primaries: none a replica may serve):",
  "",
  "| Service | invocation | count | D1 calls | D1 calls per message (a delivery) | D1 queries | connections at once | waited | subrequests | largest result | largest value |",
  "|---|---|---|---|---|---|---|---|---|---|---|",
  ...invocations.flatMap(([where, byHandler]) =>
    Object.entries(byHandler).map(
      ([handler, f]) =>
        `| ${where} | ${handler} | ${f.invocations} | ${f.d1Calls ?? ""} | ${f.d1CallsPerMessage ?? ""} | ${f.d1Queries ?? ""} | ${f.peakConnections ?? ""} | ${f.waitedConnections ?? ""} | ${f.subrequests ?? ""} | ${f.largestResultBytes ?? ""} | ${f.largestValueBytes ?? ""} |`,
    ),
  ),
  "",
  ...(distance ? [distanceTables(distance)] : []),
  `Written to ${file}.`,
].join("\n");
console.log(table);
