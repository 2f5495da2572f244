// `node tools/bench/probes/alternate.mjs PATH...`: the rates of a few paths at concurrency 10, each loaded for
// --seconds in turn, --rounds times over, on the benchmark's service (the seeded state of --scale,
// in tools/bench/service.mjs's mode). Prints each path's mean rate and its ratio to the first path's,
// from the sums: the machine's swings fall on every path alike, which one pass of `npm run bench`
// cannot promise. `PAYMENT` in a path is a payment of the seeded account.
//
//   node tools/bench/probes/alternate.mjs /v2/payments/PAYMENT/ /v1/invoices/ "/v1/invoices/?page_size=1"
import autocannon from "autocannon";
import { parseArgs } from "node:util";
import { ensureSeeded, shape, USERS } from "../seed.mjs";
import { startService } from "../service.mjs";

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    scale: { type: "string", default: "1000000" },
    rounds: { type: "string", default: "4" },
    seconds: { type: "string", default: "3" },
    port: { type: "string", default: "8799" },
  },
});
const scale = Number(values.scale);
const dir = `.bench/state-${scale}`;
ensureSeeded(scale, dir);
const paths = positionals.map((path) => path.replace("PAYMENT", shape(scale).paymentId(5)));
if (paths.length === 0) throw new Error("name the paths to load");
const service = await startService({ dir, port: Number(values.port) });
const headers = { authorization: `Basic ${Buffer.from(`${USERS.client.username}:${USERS.client.password}`).toString("base64")}` };
const load = (path, duration) => autocannon({ url: `${service.base}${path}`, connections: 10, duration, headers });
const sums = paths.map(() => 0);
try {
  for (const path of paths) await load(path, 2); // warm up
  for (let round = 0; round < Number(values.rounds); round++) {
    for (const [i, path] of paths.entries()) {
      const result = await load(path, Number(values.seconds));
      if (result.non2xx > 0) throw new Error(`${path}: ${result.non2xx} answers were not 2xx`);
      sums[i] += result.requests.average;
    }
  }
} finally {
  await service.stop();
}
for (const [i, path] of paths.entries())
  console.log(`${(sums[i] / Number(values.rounds)).toFixed(1).padStart(8)} req/s  ${(sums[i] / sums[0]).toFixed(2)}  ${path}`);
