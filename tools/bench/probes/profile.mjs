// `node tools/bench/probes/profile.mjs [events|detail|/PATH]`: where the Worker isolate's CPU goes. Runs the
// benchmark's service (tools/bench/service.mjs's mode, the seeded state of SCALE, 1,000,000 by
// default), warms it for 3 s, then loads it at concurrency 10 for SECONDS (8) with the inspector's
// CPU profiler on (200 µs sampling): events on many payments (the benchmark's write scenario) or
// the payment detail, or GET /PATH as the client user (e.g. "/v1/invoices/?page=5000"). Prints
// the functions with the most self time.
import autocannon from "autocannon";
import { openInspector, workerds } from "./inspector.mjs";
import { ensureSeeded, shape, USERS } from "../seed.mjs";
import { startService } from "../service.mjs";
const scale = Number(process.env.SCALE ?? 1000000);
const dir = `.bench/state-${scale}`;
ensureSeeded(scale, dir);
const s = shape(scale);
const service = await startService({ dir, port: 8801 });
const [[pid]] = workerds(service.pid).filter(([, role]) => role === "worker");
const { send, close } = await openInspector(pid);
const auth = (u) => `Basic ${Buffer.from(`${u.username}:${u.password}`).toString("base64")}`;
const PROCESSOR = { authorization: auth(USERS.processor), "content-type": "application/json" };
const CLIENT = { authorization: auth(USERS.client) };
const kind = process.argv[2] ?? "events";
let next = 0;
const first = Math.floor(s.payments * 0.6);
const pathOf = () => `/v2/payments/${s.paymentId(first + (next++ % (s.payments - first - 1)))}/events/`;
const body = JSON.stringify({ event_code: "PU15", description: "Bench note", instrument_number: "TR-bench" });
const opts =
  kind === "events"
    ? { url: service.base + pathOf(), method: "POST", headers: PROCESSOR, body, requests: [{ setupRequest: (r) => ({ ...r, path: pathOf() }) }] }
    : { url: service.base + (kind.startsWith("/") ? kind : `/v2/payments/${s.paymentId(50000)}/`), headers: CLIENT };
await autocannon({ ...opts, connections: 10, duration: 3 });
await send("Profiler.enable");
await send("Profiler.setSamplingInterval", { interval: 200 });
await send("Profiler.start");
const t0 = process.cpuUsage();
const r = await autocannon({ ...opts, connections: 10, duration: Number(process.env.SECONDS ?? 8) });
const { result } = await send("Profiler.stop", {}, 60_000);
console.log(kind, "req/s", r.requests.average, "non2xx", r.non2xx);
const p = result.profile;
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const self = new Map();
const dt = p.timeDeltas;
let total = 0;
for (let i = 0; i < p.samples.length; i++) {
  const n = byId.get(p.samples[i]);
  const cf = n.callFrame;
  const key = `${cf.functionName || "(anon)"} ${cf.url.split("/").slice(-2).join("/")}:${cf.lineNumber}`;
  self.set(key, (self.get(key) ?? 0) + dt[i]);
  total += dt[i];
}
const rows = [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, 40);
console.log("total sampled ms", (total / 1000).toFixed(0));
for (const [k, v] of rows) console.log((v / 1000).toFixed(0).padStart(7), ((100 * v) / total).toFixed(1).padStart(5) + "%", k);
close();
await service.stop();
