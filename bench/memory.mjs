// `node bench/memory.mjs`: whose memory grows over a long run of requests. Loads the benchmark's
// service (the seeded state of --scale, in bench/service.mjs's mode) with rounds of read requests,
// and after each round reads the Worker isolate's JS heap through the inspector (after a garbage
// collection) and the resident memory of the workerd that runs it. Then serves a Worker that only
// answers "ok" with the same `wrangler dev` and loads it the same way: the local runtime's own growth.
//
//   node bench/memory.mjs --scale 1000000 --rounds 4 --seconds 5
import autocannon from "autocannon";
import { execSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import WebSocket from "ws";
import { stopGroup } from "../scripts/process-group.mjs";
import { ensureSeeded, shape, USERS } from "./seed.mjs";
import { SERVICE_ENV, startService } from "./service.mjs";

const { values } = parseArgs({
  options: {
    scale: { type: "string", default: "1000000" },
    rounds: { type: "string", default: "4" },
    seconds: { type: "string", default: "5" },
    port: { type: "string", default: "8799" },
  },
});
const rounds = Number(values.rounds);
const seconds = Number(values.seconds);
const scale = Number(values.scale);
const dir = `.bench/state-${scale}`;
ensureSeeded(scale, dir);

const rssMiB = (pid) => Math.round(Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))[1]) / 1024);
/** The workerd processes under a process group, and the one that runs the Worker (its entry on port 0). */
const workerds = (group) =>
  execSync(`ps -eo pid,pgid,args | awk '$2 == ${group} && /workerd serve/ {print $1 " " ($0 ~ /entry=127.0.0.1:0/ ? "worker" : "entry")}'`)
    .toString()
    .trim()
    .split("\n")
    .map((line) => line.split(" "));

async function load(url, headers) {
  return (await autocannon({ url, connections: 10, duration: seconds, headers })).requests.total;
}

// 1. The service: the Worker's heap and workerd's memory after each round.
const service = await startService({ dir, port: Number(values.port) });
const [[workerPid]] = workerds(service.pid).filter(([, role]) => role === "worker");
const inspector = await openInspector(workerPid);
const s = shape(scale);
const client = { authorization: `Basic ${Buffer.from(`${USERS.client.username}:${USERS.client.password}`).toString("base64")}` };
const paths = ["/v1/invoices/", `/v2/payments/${s.paymentId(5)}/`, "/v2/payments/?status=pending", "/v1/counterparties/?type=supplier", "/healthz"];
const rows = [];
for (let round = 0; round <= rounds; round++) {
  let requests = 0;
  if (round > 0) for (const path of paths) requests += await load(`${service.base}${path}`, client);
  rows.push({ what: "service", round, requests, worker_heap_mib: await inspector.heapMiB(), workerd_rss_mib: rssMiB(workerPid) });
  console.error(JSON.stringify(rows.at(-1)));
}
inspector.close();
await service.stop();

// 2. A Worker that only answers "ok", with the same wrangler dev and environment.
const bare = mkdtempSync(join(tmpdir(), "bare-worker-"));
writeFileSync(join(bare, "index.js"), 'export default { fetch: () => new Response("ok") };\n');
writeFileSync(join(bare, "wrangler.toml"), 'name = "bare"\nmain = "index.js"\ncompatibility_date = "2025-09-01"\n');
const port = Number(values.port) + 1;
const child = spawn(resolve("node_modules/.bin/wrangler"), ["dev", "--ip", "127.0.0.1", "--port", String(port), "--show-interactive-dev-session=false", "--log-level", "error"], {
  cwd: bare,
  env: { ...process.env, ...SERVICE_ENV },
  stdio: "ignore",
  detached: true,
});
const base = `http://127.0.0.1:${port}`;
while (!(await fetch(base).then((r) => r.ok, () => false))) await new Promise((done) => setTimeout(done, 250));
const pids = workerds(child.pid);
for (let round = 0; round <= rounds; round++) {
  let requests = 0;
  if (round > 0) for (let i = 0; i < paths.length; i++) requests += await load(base, {}); // as long as a service round
  rows.push({ what: "bare worker", round, requests, workerd_rss_mib: pids.map(([pid, role]) => `${role} ${rssMiB(pid)}`).join(", ") });
  console.error(JSON.stringify(rows.at(-1)));
}
await stopGroup(child);
rmSync(bare, { recursive: true, force: true });
console.table(rows);

/** The Worker isolate's inspector (workerd's --inspector-addr), for its heap size. */
async function openInspector(pid) {
  const ports = [...execSync(`ss -ltnp | grep "pid=${pid},"`).toString().matchAll(/(?:127\.0\.0\.1|localhost|\[::1\]):(\d+)/g)].map((m) => m[1]);
  let targets = [];
  for (const p of ports) {
    targets = await fetch(`http://127.0.0.1:${p}/json/list`).then((r) => r.json(), () => []);
    if (targets.length > 0) break;
  }
  const target = targets.find((t) => /payments-api/.test(t.id + t.title)) ?? targets[0];
  const ws = new WebSocket(target.webSocketDebuggerUrl.replace("localhost", "127.0.0.1"));
  await new Promise((done) => ws.once("open", done));
  let seq = 0;
  const waiting = new Map();
  ws.on("message", (data) => {
    const message = JSON.parse(data);
    waiting.get(message.id)?.(message);
    waiting.delete(message.id);
  });
  // workerd does not answer every method (collectGarbage among them, at times): give up after 5 s.
  const send = (method, params = {}) =>
    Promise.race([
      new Promise((done) => {
        const id = ++seq;
        waiting.set(id, done);
        ws.send(JSON.stringify({ id, method, params }));
      }),
      new Promise((done) => setTimeout(() => done({}), 5000)),
    ]);
  await send("HeapProfiler.enable");
  return {
    async heapMiB() {
      const collected = await send("HeapProfiler.collectGarbage");
      const usage = await send("Runtime.getHeapUsage");
      const used = usage.result ? (usage.result.usedSize / 2 ** 20).toFixed(1) : "?";
      return `${used}${collected.result ? "" : " (no collection)"}`;
    },
    close: () => ws.close(),
  };
}
