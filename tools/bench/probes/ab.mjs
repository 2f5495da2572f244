// `node tools/bench/probes/ab.mjs [--base DIR] [--base-state DIR] [--scale N] [--rounds 3] [--seconds 5] PATH...`:
// this checkout (A) against another checkout (B, DIR: e.g. `git worktree add /tmp/base HEAD~1`
// with node_modules linked; this one when not given), both served in the benchmark's mode
// (tools/bench/service.mjs), each on its own copy of the seeded state in memory (as `npm run bench`
// serves it; or B on the state in DIR as it is, `--base-state`: e.g. the same code on a disk),
// and loaded in turns at concurrency 10: A then B, B then A, and so on. This
// machine's speed drifts by a third between runs, and the drift hits both services alike here.
// PATH is a GET as the client user ("/v1/invoices/?page=5000"), or "detail" (a payment detail).
// Prints each service's mean req/s, and the CPU its processes spent per request (from /proc):
// the steadier of the two figures.
import autocannon from "autocannon";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { ensureSeeded, shape, USERS } from "../seed.mjs";
import { runState, startService } from "../service.mjs";

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    base: { type: "string", default: "." },
    "base-state": { type: "string" },
    scale: { type: "string", default: "1000000" },
    rounds: { type: "string", default: "3" },
    seconds: { type: "string", default: "5" },
  },
});
if (positionals.length === 0) {
  console.error("usage: node tools/bench/probes/ab.mjs [--base DIR] [--base-state DIR] [--scale N] [--rounds 3] [--seconds 5] PATH...");
  process.exit(2);
}
const scale = Number(values.scale);
const state = resolve(`.bench/state-${scale}`);
ensureSeeded(scale, state);
const s = shape(scale);
const CLIENT = { authorization: `Basic ${Buffer.from(`${USERS.client.username}:${USERS.client.password}`).toString("base64")}` };
const paths = positionals.map((path) => (path === "detail" ? `/v2/payments/${s.paymentId(Math.floor(s.payments / 2))}/` : path));

const here = process.cwd();
// Both services and the copies are undone at exit, however the script ends (service.mjs).
const states = [runState(state), values["base-state"] ? runState(resolve(values["base-state"]), { onDisk: true }) : runState(state)];
process.chdir(resolve(values.base));
const B = await startService({ dir: states[1].dir, port: 8803 });
process.chdir(here);
const A = await startService({ dir: states[0].dir, port: 8802 });
const services = { A, B };
for (const service of [A, B]) for (const path of paths) await autocannon({ url: service.base + path, headers: CLIENT, connections: 10, duration: 2 });

const runs = {};
for (let round = 0; round < Number(values.rounds); round++)
  for (const path of paths)
    for (const name of round % 2 ? ["B", "A"] : ["A", "B"]) {
      const service = services[name];
      const before = service.cpuMs();
      const result = await autocannon({ url: service.base + path, headers: CLIENT, connections: 10, duration: Number(values.seconds) });
      if (result.non2xx) throw new Error(`${name} ${path}: ${result.non2xx} answers not 2xx`);
      (runs[`${path}\t${name}`] ??= []).push({ rps: result.requests.average, cpu: (service.cpuMs() - before) / result.requests.total });
      console.error(`round ${round + 1} ${name} ${path}: ${result.requests.average} req/s`);
    }

const mean = (list, key) => list.reduce((sum, run) => sum + run[key], 0) / list.length;
console.log(`| path | A req/s | B req/s | A/B | A CPU ms/req | B CPU ms/req |\n|---|---|---|---|---|---|`);
for (const path of paths) {
  const [a, b] = [runs[`${path}\tA`], runs[`${path}\tB`]];
  console.log(
    `| ${path} | ${mean(a, "rps").toFixed(1)} | ${mean(b, "rps").toFixed(1)} | ${(mean(a, "rps") / mean(b, "rps")).toFixed(2)} | ${mean(a, "cpu").toFixed(2)} | ${mean(b, "cpu").toFixed(2)} |`,
  );
}
await A.stop();
await B.stop();
