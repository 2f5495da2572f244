// `node tools/bench/probes/memory.mjs`: whose memory grows over a long run of requests. Loads the benchmark's
// service (the seeded state of --scale, in tools/bench/service.mjs's mode) with rounds of read requests,
// and after each round reads the Worker isolate's JS heap through the inspector (after a garbage
// collection) and the resident memory of the workerd that runs it. Then serves a Worker that only
// answers "ok" with the same `wrangler dev` and loads it the same way: the local runtime's own growth.
//
//   node tools/bench/probes/memory.mjs --scale 1000000 --rounds 4 --seconds 5
import autocannon from "autocannon";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { stopGroup } from "../../lib/process-group.mjs";
import { openInspector, workerds } from "./inspector.mjs";
import { ensureSeeded, shape, USERS } from "../seed.mjs";
import { SERVICE_ENV, startService } from "../service.mjs";

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
async function load(url, headers) {
  return (await autocannon({ url, connections: 10, duration: seconds, headers })).requests.total;
}

// 1. The service: the Worker's heap and workerd's memory after each round.
const service = await startService({ dir, port: Number(values.port) });
const [[workerPid]] = workerds(service.pid).filter(([, role]) => role === "worker");
const inspector = await heapInspector(workerPid);
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
const child = spawn(
  resolve("node_modules/.bin/wrangler"),
  ["dev", "--ip", "127.0.0.1", "--port", String(port), "--show-interactive-dev-session=false", "--log-level", "error"],
  {
    cwd: bare,
    env: { ...process.env, ...SERVICE_ENV },
    stdio: "ignore",
    detached: true,
  },
);
const base = `http://127.0.0.1:${port}`;
while (
  !(await fetch(base).then(
    (r) => r.ok,
    () => false,
  ))
)
  await new Promise((done) => setTimeout(done, 250));
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

/** The Worker isolate's JS heap after a garbage collection, through its inspector. */
async function heapInspector(pid) {
  const { send, close } = await openInspector(pid);
  await send("HeapProfiler.enable");
  return {
    async heapMiB() {
      const collected = await send("HeapProfiler.collectGarbage");
      const usage = await send("Runtime.getHeapUsage");
      const used = usage.result ? (usage.result.usedSize / 2 ** 20).toFixed(1) : "?";
      return `${used}${collected.result ? "" : " (no collection)"}`;
    },
    close,
  };
}
