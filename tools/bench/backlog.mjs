// `npm run bench:backlog`: a queue outage's backlog, and how fast the outbox sweeper drains it.
//
// N deliveries (default 100,000) of one subscription are written as a queue outage leaves them:
// pending, due, never handed to the queue. The service then starts with the queue working, and the
// cron trigger fires once a minute as Cloudflare's would (`/__scheduled`, the normal sweep, not
// `npm start`'s restart sweep). Reported: when each sweep ran, how many deliveries had reached the
// receiver by then, the time until the last one arrived, and the rate. Same mode as `npm run bench`.
//
//   npm run bench:backlog -- --deliveries 100000
import { spawnSync } from "node:child_process";
import { cpus, totalmem } from "node:os";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { migrateAll } from "../lib/d1.mjs";
import { MODE, SERVICE_ENV, startService } from "./service.mjs";
import { startHookReceiver } from "./webhooks.mjs";

const { values } = parseArgs({
  options: { deliveries: { type: "string", default: "100000" }, port: { type: "string", default: "8797" }, "cron-s": { type: "string", default: "60" } },
});
const count = Number(values.deliveries);
const cronMs = Number(values["cron-s"]) * 1000;
const dir = ".tools/bench/backlog";
const ADMIN = { authorization: "Bearer bench-admin-token", "content-type": "application/json" };
const wrangler = (args) => {
  const result = spawnSync("node_modules/.bin/wrangler", args, { env: { ...process.env, ...SERVICE_ENV }, encoding: "utf8", input: "y\n" });
  if (result.status !== 0) throw new Error(`wrangler ${args.slice(0, 3).join(" ")} failed:\n${result.stdout}${result.stderr}`);
};

rmSync(dir, { recursive: true, force: true });
mkdirSync(dir, { recursive: true });
const failed = migrateAll({ persistTo: dir });
if (failed.length > 0) throw new Error(`migrations failed:\n${failed.map((f) => f.output).join("\n")}`);
const receiver = await startHookReceiver();

// An account, its client and a subscription to the receiver, through the API.
let service = await startService({ dir, port: Number(values.port) });
const account = await (await fetch(`${service.base}/admin/accounts/`, { method: "POST", headers: ADMIN, body: JSON.stringify({ name: "backlog" }) })).json();
const user = await (
  await fetch(`${service.base}/admin/accounts/${account.id}/api-users/`, {
    method: "POST",
    headers: ADMIN,
    body: JSON.stringify({ username: "backlog-client", role: "client" }),
  })
).json();
const client = { authorization: `Basic ${btoa(`backlog-client:${user.password}`)}`, "content-type": "application/json" };
const subscription = await (
  await fetch(`${service.base}/v1/webhooks/`, {
    method: "POST",
    headers: client,
    body: JSON.stringify({
      event: "payment.changed",
      url: `${receiver.url}/ok/backlog`,
      content_type: "application/json",
      username: "bench",
      password: "bench-pass",
    }),
  })
).json();
if (!subscription.id) throw new Error(`subscribe: ${JSON.stringify(subscription)}`);
await service.stop();

// The outage: every delivery committed, none handed over (enqueued_at null), all due, written 1 ms
// apart over the outage's last N ms.
const now = Date.now();
const sql = [
  `WITH RECURSIVE seq(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM seq WHERE n < ${count})`,
  `INSERT INTO webhook_deliveries (id, subscription_id, account_id, payment_id, body, content_type, status, attempts, next_attempt_at, enqueued_at, created_at, updated_at)`,
  `SELECT printf('backlog-%08d', n), '${subscription.id}', '${account.id}', printf('pmt_backlog%011d', n),`,
  `  json_object('object_type', 'payment', 'object_id', printf('pmt_backlog%011d', n), 'event', 'payment.changed'), 'application/json', 'pending', 0, ${now - count} + n, NULL, ${now - count} + n, ${now - count} + n FROM seq;`,
].join("\n");
const file = join(dir, "backlog.sql");
writeFileSync(file, `${sql}\n`);
wrangler(["d1", "execute", `SHARD_${account.shard}`, "--local", "--persist-to", dir, "--file", file]);

// The queue is back: the service starts, and the cron fires every minute.
service = await startService({ dir, port: Number(values.port), scheduled: true });
const started = Date.now();
const sweeps = [];
const arrived = async () => (await receiver.arrivals("backlog")).length;
let last = 0;
let times = [];
try {
  for (;;) {
    const at = Date.now();
    const res = await fetch(`${service.base}/__scheduled?cron=${encodeURIComponent("* * * * *")}`);
    sweeps.push({ at_s: Math.round((at - started) / 1000), status: res.status, answered_ms: Date.now() - at, arrived: await arrived() });
    console.error(`sweep at ${sweeps.at(-1).at_s} s: ${sweeps.at(-1).arrived} arrived`);
    const next = at + cronMs;
    while (Date.now() < next) {
      last = await arrived();
      if (last >= count) break;
      await new Promise((done) => setTimeout(done, 1000));
    }
    if (last >= count || Date.now() - started > 60 * 60_000) break;
  }
  times = (await receiver.arrivals("backlog")).map(([, at]) => at).sort((a, b) => a - b);
} finally {
  await service.stop();
  await receiver.stop();
}
const drainS = (Date.now() - started) / 1000;
// The consumer's own pace: arrivals per second over each sweep's stretch of deliveries.
const spans = sweeps
  .map((sweep, i) => {
    const from = started + sweep.at_s * 1000;
    const to = i + 1 < sweeps.length ? started + sweeps[i + 1].at_s * 1000 : Infinity;
    const inside = times.filter((at) => at >= from && at < to);
    return inside.length > 1
      ? { sweep_at_s: sweep.at_s, delivered: inside.length, per_s: Math.round((inside.length / (inside.at(-1) - inside[0])) * 1000) }
      : null;
  })
  .filter(Boolean);
const machine = `${cpus().length} cores (${cpus()[0]?.model ?? "unknown"}), ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
const report = {
  at: new Date().toISOString(),
  deliveries: count,
  delivered: last,
  drain_s: Math.round(drainS),
  deliveries_per_s: Math.round(last / drainS),
  cron_every_s: cronMs / 1000,
  spans,
  mode: MODE,
  machine,
  sweeps,
};
mkdirSync("tools/bench/results", { recursive: true });
const out = join("tools/bench/results", `${report.at.replace(/[:.]/g, "-")}-backlog.json`);
writeFileSync(out, JSON.stringify(report, null, 2));
console.log(
  [
    `Backlog of ${count.toLocaleString("en")} deliveries never handed to the queue; cron every ${cronMs / 1000} s; ${MODE}; ${machine}.`,
    `Delivered ${last.toLocaleString("en")} in ${Math.round(drainS)} s (${report.deliveries_per_s}/s end to end).`,
    ...spans.map((s) => `After the sweep at ${s.sweep_at_s} s: ${s.delivered.toLocaleString("en")} delivered at ${s.per_s}/s (first to last arrival).`),
    "",
    "| sweep at (s) | answered in (ms) | delivered by then |",
    "|---|---|---|",
    ...sweeps.map((s) => `| ${s.at_s} | ${s.answered_ms} | ${s.arrived.toLocaleString("en")} |`),
    "",
    `Written to ${out}.`,
  ].join("\n"),
);
