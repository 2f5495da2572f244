// Local end-to-end latency: from recording a payment event to its signed delivery arriving at a
// receiver on 127.0.0.1. Run `npm start` in another terminal first, then:
//   node tools/bench/probes/latency.mjs [events=200]
import { readFileSync } from "node:fs";
import { startReceiver } from "../../receiver/index.mjs";

const EVENTS = Number(process.argv[2] ?? 200);
const BASE = `http://127.0.0.1:${process.env.PORT ?? 8787}`;
const vars = Object.fromEntries(
  readFileSync(".dev.vars", "utf8")
    .split("\n")
    .map((line) => /^([A-Z_]+)="?([^"]*)"?$/.exec(line))
    .filter(Boolean)
    .map((m) => [m[1], m[2]]),
);
const auth = (user, password) => ({ authorization: `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`, "content-type": "application/json" });
const client = auth("demo-client", vars.DEMO_CLIENT_PASSWORD);
const processor = auth("demo-processor", vars.DEMO_PROCESSOR_PASSWORD);

const receiver = await startReceiver({ quiet: true });
const path = `/bench-${Date.now()}`;
const subscription = await fetch(`${BASE}/v1/webhooks/`, {
  method: "POST",
  headers: client,
  body: JSON.stringify({
    event: "payment.changed",
    url: `${receiver.url}${path}`,
    content_type: "application/json",
    username: "bench",
    password: "bench-pass",
    payment_events: true,
  }),
}).then((r) => r.json());
if (!subscription.secret) throw new Error(`subscribe failed: ${JSON.stringify(subscription)}`);
receiver.configs.set(path, { secret: subscription.secret, username: "bench", password: "bench-pass" });

// The subscription is deleted however the run ends: one left behind would keep taking deliveries
// to a receiver that is gone, and slow every later run.
const sentAt = new Map();
const arrivals = [];
let byStatus, retried;
try {
  // Fresh payments (20 events each), so bodies stay the size a real payment's are.
  const BUYER = "cpty_demoBuyerAcme00000001";
  const SUPPLIER = "cpty_demoSupplierNorthwind1";
  const payments = [];
  for (let i = 0; i < Math.ceil(EVENTS / 20); i++) {
    const invoice = await fetch(`${BASE}/v1/invoices/`, {
      method: "POST",
      headers: client,
      body: JSON.stringify({ invoice_number: `BENCH-${Date.now()}-${i}`, buyer_id: BUYER, supplier_id: SUPPLIER, amount_cents: 100 }),
    }).then((r) => r.json());
    const payment = await fetch(`${BASE}/v2/payments/`, {
      method: "POST",
      headers: client,
      body: JSON.stringify({ originating_counterparty_id: BUYER, receiving_counterparty_id: SUPPLIER, invoice_ids: [invoice.id], payment_method: "ach" }),
    }).then((r) => r.json());
    payments.push(payment.id);
  }
  await new Promise((resolve) => setTimeout(resolve, 2000)); // let the creations' deliveries land first

  const done = () => arrivals.filter((entry) => sentAt.has(entry.eventId)).length >= EVENTS;
  const arrived = new Promise((resolve) => {
    const timer = setInterval(() => {
      for (const entry of receiver.received.get(path)?.splice(0) ?? []) {
        const verified = entry.verified?.basic && entry.verified.hmac && entry.verified.standard && entry.verified.kit;
        arrivals.push({ eventId: JSON.parse(entry.body).payment_events.at(-1).id, receivedAt: entry.received_at, verified });
      }
      if (done()) {
        clearInterval(timer);
        resolve();
      }
    }, 5);
  });

  for (let i = 0; i < EVENTS; i++) {
    const started = Date.now();
    const res = await fetch(`${BASE}/v2/payments/${payments[i % payments.length]}/events/`, {
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
  byStatus = {};
  for (const delivery of log.results) byStatus[delivery.status] = (byStatus[delivery.status] ?? 0) + 1;
  retried = log.results.filter((delivery) => delivery.attempts.length !== 1).map((d) => ({ id: d.id, status: d.status, attempts: d.attempts }));
} finally {
  await fetch(`${BASE}/v1/webhooks/${subscription.id}/`, { method: "DELETE", headers: client });
}
await receiver.close();

const matched = arrivals.filter((entry) => sentAt.has(entry.eventId));
const unverified = matched.filter((entry) => !entry.verified).length;
const latencies = matched.map((entry) => entry.receivedAt - sentAt.get(entry.eventId)).sort((a, b) => a - b);
const pct = (p) => latencies[Math.min(latencies.length - 1, Math.ceil((p / 100) * latencies.length) - 1)];
console.log(JSON.stringify({ deliveries: byStatus, not_exactly_one_attempt: retried.slice(0, 3) }));
console.log(
  JSON.stringify({ events: EVENTS, delivered: latencies.length, unverified, p50_ms: pct(50), p90_ms: pct(90), p99_ms: pct(99), max_ms: latencies.at(-1) }),
);
