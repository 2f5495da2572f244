// Local end-to-end latency: from recording a payment event to its signed delivery arriving at a
// receiver on 127.0.0.1. Run `npm start` in another terminal first, then:
//   node scripts/bench-latency.mjs [events=200]
import { readFileSync } from "node:fs";
import { startReceiver } from "./receiver.mjs";

const EVENTS = Number(process.argv[2] ?? 200);
const BASE = `http://127.0.0.1:${process.env.PORT ?? 8787}`;
const vars = Object.fromEntries(
  readFileSync(".dev.vars", "utf8").split("\n").map((line) => /^([A-Z_]+)="?([^"]*)"?$/.exec(line)).filter(Boolean).map((m) => [m[1], m[2]]),
);
const auth = (user, password) => ({ authorization: `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`, "content-type": "application/json" });
const client = auth("demo-client", vars.DEMO_CLIENT_PASSWORD);
const processor = auth("demo-processor", vars.DEMO_PROCESSOR_PASSWORD);

const receiver = await startReceiver({ quiet: true });
const path = `/bench-${Date.now()}`;
const subscription = await fetch(`${BASE}/v1/webhooks/`, {
  method: "POST",
  headers: client,
  body: JSON.stringify({ event: "payment.changed", url: `${receiver.url}${path}`, content_type: "application/json", username: "bench", password: "bench-pass", payment_events: true }),
}).then((r) => r.json());
if (!subscription.secret) throw new Error(`subscribe failed: ${JSON.stringify(subscription)}`);
receiver.configs.set(path, { secret: subscription.secret, username: "bench", password: "bench-pass" });

const sentAt = new Map();
const latencies = [];
let unverified = 0;
const arrived = new Promise((resolve) => {
  const timer = setInterval(() => {
    for (const entry of receiver.received.get(path)?.splice(0) ?? []) {
      if (!(entry.verified?.basic && entry.verified.hmac && entry.verified.standard)) unverified++;
      const events = JSON.parse(entry.body).payment_events;
      const sent = sentAt.get(events.at(-1).id);
      if (sent !== undefined) latencies.push(entry.received_at - sent);
    }
    if (latencies.length >= EVENTS) {
      clearInterval(timer);
      resolve();
    }
  }, 5);
});

const payment = "pmt_demoPaymentSettled0001";
for (let i = 0; i < EVENTS; i++) {
  const started = Date.now();
  const res = await fetch(`${BASE}/v2/payments/${payment}/events/`, {
    method: "POST",
    headers: processor,
    body: JSON.stringify({ event_code: "BENCH", description: `bench ${i}` }),
  });
  const event = await res.json();
  if (res.status !== 201) throw new Error(`event ${i}: ${res.status} ${JSON.stringify(event)}`);
  sentAt.set(event.id, started);
  await new Promise((resolve) => setTimeout(resolve, 20));
}
await Promise.race([arrived, new Promise((resolve) => setTimeout(resolve, 60_000))]);
const log = await fetch(`${BASE}/v1/webhooks/${subscription.id}/deliveries/?page_size=1000`, { headers: client }).then((r) => r.json());
const byStatus = {};
for (const delivery of log.results) byStatus[delivery.status] = (byStatus[delivery.status] ?? 0) + 1;
const retried = log.results.filter((delivery) => delivery.attempts.length !== 1).map((d) => ({ id: d.id, status: d.status, attempts: d.attempts }));
await fetch(`${BASE}/v1/webhooks/${subscription.id}/`, { method: "DELETE", headers: client });
await receiver.close();

latencies.sort((a, b) => a - b);
const pct = (p) => latencies[Math.min(latencies.length - 1, Math.ceil((p / 100) * latencies.length) - 1)];
console.log(JSON.stringify({ deliveries: byStatus, not_exactly_one_attempt: retried.slice(0, 3) }));
console.log(JSON.stringify({ events: EVENTS, delivered: latencies.length, unverified, p50_ms: pct(50), p90_ms: pct(90), p99_ms: pct(99), max_ms: latencies.at(-1) }));
