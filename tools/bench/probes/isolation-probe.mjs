// `node tools/bench/probes/isolation-probe.mjs [EVENTS] [alone]`: 2 healthy subscriptions and 1 whose receiver hangs (none with
// "alone"), a burst of EVENTS (2,000) at concurrency 10 on the benchmark service (scale 1,000,000).
// Prints the healthy deliveries' event-to-receipt p50 and p99, then p50/max by the second each event
// was sent, and when the hanging receiver was tried: where in a burst a slow delivery comes from.
// Serves a copy of the seeded state in memory, as `npm run bench` does (its writes stay there).
import autocannon from "autocannon";
import { runState, startService } from "../service.mjs";
import { USERS, shape } from "../seed.mjs";
import { startHookReceiver, removeSubscriptions } from "../webhooks.mjs";
const auth = (u) => `Basic ${Buffer.from(`${u.username}:${u.password}`).toString("base64")}`;
const state = runState(".bench/state-1000000");
const service = await startService({ dir: state.dir, port: 8799 });
const s = shape(1000000);
const C = { authorization: auth(USERS.client), "content-type": "application/json" };
const P = { authorization: auth(USERS.processor), "content-type": "application/json" };
await removeSubscriptions(service.base, C);
const receiver = await startHookReceiver();
const hang = process.argv[3] !== "alone";
const subs = [["ok", "h1"], ["ok", "h2"], ...(hang ? [["hang", "hung"]] : [])];
for (const [kind, tag] of subs)
  await fetch(`${service.base}/v1/webhooks/`, {
    method: "POST",
    headers: C,
    body: JSON.stringify({
      event: "payment.changed",
      url: `${receiver.url}/${kind}/${tag}`,
      content_type: "application/json",
      username: "b",
      password: "bench-pass",
      payment_status: true,
    }),
  });
const n = Number(process.argv[2] ?? 2000);
const base0 = 70000 + Math.floor(Math.random() * 20000);
const ids = Array.from({ length: n }, (_, i) => s.paymentId(base0 + i));
const sent = new Map();
let idx = 0;
const t0 = Date.now();
await autocannon({
  url: service.base + "/x",
  connections: 10,
  amount: n,
  method: "POST",
  headers: P,
  body: JSON.stringify({ event_code: "PU15", description: "x" }),
  requests: [
    {
      setupRequest: (q) => {
        const id = ids[idx++];
        sent.set(id, Date.now());
        return { ...q, path: `/v2/payments/${id}/events/` };
      },
    },
  ],
});
console.log("fired in", Date.now() - t0, "ms");
for (;;) {
  const a = await receiver.arrivals("h1"),
    b = await receiver.arrivals("h2");
  if (a.length >= n && b.length >= n) break;
  if (Date.now() - t0 > 200000) break;
  await new Promise((d) => setTimeout(d, 300));
}
const pct = (a, p) => {
  const b = [...a].sort((x, y) => x - y);
  return b[Math.min(b.length - 1, Math.floor((p / 100) * b.length))];
};
const all = [];
for (const tag of ["h1", "h2"]) for (const [id, at] of await receiver.arrivals(tag)) all.push([sent.get(id) - t0, at - sent.get(id), at - t0]);
console.log(
  "healthy",
  all.length,
  "p50",
  pct(
    all.map((x) => x[1]),
    50,
  ),
  "p99",
  pct(
    all.map((x) => x[1]),
    99,
  ),
  "last arrival s",
  Math.max(...all.map((x) => x[2])) / 1000,
);
const buckets = new Map();
for (const [sentRel, lat] of all) {
  const b = Math.floor(sentRel / 1000);
  buckets.set(b, [...(buckets.get(b) ?? []), lat]);
}
console.log(
  [...buckets]
    .sort((a, b) => a[0] - b[0])
    .map(([b, l]) => `${b}s:${pct(l, 50)}/${Math.max(...l)}`)
    .join(" "),
);
if (hang) {
  const h = await receiver.arrivals("hung");
  const hb = new Map();
  for (const [, at] of h) {
    const b = Math.floor((at - t0) / 1000);
    hb.set(b, (hb.get(b) ?? 0) + 1);
  }
  console.log(
    "hanging attempts",
    h.length,
    [...hb]
      .sort((a, b) => a[0] - b[0])
      .map(([b, c]) => `${b}s:${c}`)
      .join(" "),
  );
}
await removeSubscriptions(service.base, C);
await receiver.stop();
await service.stop();
