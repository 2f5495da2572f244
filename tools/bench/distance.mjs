// Latency at a distance: each request kind sent one at a time to a service whose every D1 round
// trip is delayed as Cloudflare's network would delay it (src/dev/within-limits.ts:
// D1_ROUND_TRIP_MS to the primary, D1_REPLICA_ROUND_TRIP_MS to a read replica), with the round
// trips each kind makes (Server-Timing) and the floor they allow. Three settings: no distance; a
// Worker at the edge near a client far from the primary (30 ms to the primary, 5 ms to a replica
// in the client's region); a Worker next to the primary (1 ms to either). The placement table is
// made from them (docs/performance.md says how).
import { startService } from "./service.mjs";

export const SETTINGS = [
  { name: "0 ms", primaryMs: 0, replicaMs: 0 },
  { name: "30/5 ms", primaryMs: 30, replicaMs: 5 },
  { name: "1/1 ms", primaryMs: 1, replicaMs: 1 },
];
/** What a request to a Worker placed next to the primary pays on the way from a far client's edge: one round trip to the primary's region. */
export const FAR_HOP_MS = 30;

const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? null;
const figure = (timing, name) => Number(new RegExp(`${name};desc="(\\d+)"`).exec(timing)?.[1] ?? NaN);

/**
 * The request kinds: each `make(i)` gives the i-th request ({path, method, headers, body}), after
 * doing (unmeasured) whatever it needs first; `after` undoes what one did, unmeasured.
 */
function requestKinds({ base, client, processor, s }) {
  const json = { "content-type": "application/json" };
  const post = (headers, path, body) =>
    fetch(`${base}${path}`, { method: "POST", headers: { ...headers, ...json }, body: JSON.stringify(body) }).then((r) => r.json());
  const payment = (n) => s.paymentId(Math.floor(s.payments * 0.6) + (n % Math.floor(s.payments * 0.3)));
  const run = Date.now().toString(36);
  return [
    { kind: "an authenticated 400 (a bad filter)", status: 400, make: () => ({ path: "/v1/invoices/?created__gte=yesterday", headers: client }) },
    { kind: "payment detail", make: (i) => ({ path: `/v2/payments/${payment(i)}/`, headers: client }) },
    { kind: "invoices list, no filter", make: () => ({ path: "/v1/invoices/", headers: client }) },
    {
      kind: "payments polling by updated",
      make: () => ({ path: `/v2/payments/?ordering=updated&updated__gt=${new Date(s.paymentUpdatedAt(s.payments - 50)).toISOString()}`, headers: client }),
    },
    {
      kind: "new counterparty",
      make: (i) => ({
        path: "/v1/counterparties/",
        method: "POST",
        headers: { ...client, ...json },
        body: { internal_id: `dist-${run}-${i}`, type: "buyer", name: "Distance" },
      }),
    },
    {
      kind: "new invoice",
      make: (i) => ({
        path: "/v1/invoices/",
        method: "POST",
        headers: { ...client, ...json },
        body: { invoice_number: `DIST-I-${run}-${i}`, buyer_id: s.buyerId(1), supplier_id: s.supplierId(1), amount_cents: 100 },
      }),
    },
    ...[false, true].map((keyed) => ({
      kind: keyed ? "new payment with an Idempotency-Key" : "new payment",
      make: async (i) => {
        const invoice = await post(client, "/v1/invoices/", {
          invoice_number: `DIST-${keyed ? "K" : "P"}-${run}-${i}`,
          buyer_id: s.buyerId(1),
          supplier_id: s.supplierId(1),
          amount_cents: 100,
        });
        const headers = { ...client, ...json, ...(keyed ? { "idempotency-key": `dist-p-${run}-${i}` } : {}) };
        return {
          path: "/v2/payments/",
          method: "POST",
          headers,
          body: { originating_counterparty_id: s.buyerId(1), receiving_counterparty_id: s.supplierId(1), invoice_ids: [invoice.id], payment_method: "ach" },
        };
      },
    })),
    {
      kind: "payment event",
      make: (i) => ({
        path: `/v2/payments/${payment(i + 7919)}/events/`,
        method: "POST",
        headers: { ...processor, ...json },
        body: { event_code: "PU15", description: "distance" },
      }),
    },
    {
      kind: "payment event with an Idempotency-Key",
      make: (i) => ({
        path: `/v2/payments/${payment(i + 15838)}/events/`,
        method: "POST",
        headers: { ...processor, ...json, "idempotency-key": `dist-${run}-${i}` },
        body: { event_code: "PU15", description: "distance, keyed" },
      }),
    },
    {
      kind: "new subscription",
      make: (i) => ({
        path: "/v1/webhooks/",
        method: "POST",
        headers: { ...client, ...json },
        body: {
          event: "payment.changed",
          content_type: "application/json",
          url: `http://127.0.0.1:9/distance-${i}`,
          username: "hook",
          password: `hook-password-${i}`,
          is_active: false,
        },
      }),
      // An account has at most 20: each goes again before the next is made.
      after: (answer) => fetch(`${base}/v1/webhooks/${answer.id}/`, { method: "DELETE", headers: client }).then((r) => r.arrayBuffer()),
    },
  ];
}

/** Each request kind `count` times in turn, on a service started with `setting`'s delays; per kind: p50, p99, round trips. */
async function measure({ dir, port, setting, count, client, processor, s, log }) {
  const service = await startService({ dir, port, vars: { D1_ROUND_TRIP_MS: String(setting.primaryMs), D1_REPLICA_ROUND_TRIP_MS: String(setting.replicaMs) } });
  const out = [];
  try {
    for (const kind of requestKinds({ base: service.base, client, processor, s })) {
      const times = [];
      let calls = null;
      let replica = null;
      for (let i = -2; i < count; i++) {
        const request = await kind.make(i + 1000 * SETTINGS.indexOf(setting));
        const init = { method: request.method ?? "GET", headers: request.headers, body: request.body === undefined ? undefined : JSON.stringify(request.body) };
        const started = performance.now();
        const res = await fetch(`${service.base}${request.path}`, init);
        const text = await res.text();
        const ms = performance.now() - started;
        if (kind.after && res.ok) await kind.after(JSON.parse(text));
        if (res.status !== (kind.status ?? (init.method === "POST" ? 201 : 200)))
          throw new Error(`${kind.kind}: ${request.path} answered ${res.status}: ${text.slice(0, 300)}`);
        if (i < 0) continue; // the first two warm the isolate and its connections
        times.push(ms);
        const timing = res.headers.get("server-timing") ?? "";
        calls = figure(timing, "d1-calls");
        replica = figure(timing, "cf-d1-replica-calls");
      }
      times.sort((a, b) => a - b);
      const primary = calls - replica;
      out.push({
        kind: kind.kind,
        d1_calls: calls,
        replica_calls: replica,
        p50_ms: Math.round(quantile(times, 0.5)),
        p99_ms: Math.round(quantile(times, 0.99)),
        floor_ms: primary * setting.primaryMs + replica * setting.replicaMs,
      });
      log(`${setting.name} ${kind.kind}: p50 ${out.at(-1).p50_ms} ms (${calls} round trips, ${replica} replica)`);
    }
  } finally {
    await service.stop();
  }
  return out;
}

/** The three settings, and the placement comparison made from them. */
export async function distanceScenario({ dir, port, client, processor, s, smoke, log }) {
  const count = smoke ? 5 : 100;
  const bySetting = {};
  for (const setting of SETTINGS) bySetting[setting.name] = await measure({ dir, port, setting, count, client, processor, s, log });
  const kinds = bySetting["0 ms"].map((row) => row.kind);
  const at = (name, kind) => bySetting[name].find((row) => row.kind === kind);
  const rows = kinds.map((kind) => {
    const zero = at("0 ms", kind);
    const far = at("30/5 ms", kind);
    const near = at("1/1 ms", kind);
    return {
      kind,
      d1_calls: far.d1_calls,
      replica_calls: far.replica_calls,
      p50_0: zero.p50_ms,
      p99_0: zero.p99_ms,
      p50_far: far.p50_ms,
      p99_far: far.p99_ms,
      floor_far: far.floor_ms,
      // A client far from the primary: at the edge, the 30/5 ms figures; placed next to the primary, the 1/1 ms ones plus the hop there.
      edge_far_p50: far.p50_ms,
      placed_far_p50: near.p50_ms + FAR_HOP_MS,
      // A client near the primary: edge and placement are the same place.
      near_p50: near.p50_ms,
    };
  });
  return { count, settings: SETTINGS, far_hop_ms: FAR_HOP_MS, rows };
}

/** The tables, in Markdown. */
export function distanceTables(result) {
  const { rows, count, far_hop_ms: hop } = result;
  return [
    `At a distance: each request kind ${count} times one after another (after 2 to warm up), its every D1 round trip delayed (src/dev/within-limits.ts). Round trips from Server-Timing: D1 calls, and those a read replica may serve. Floor: those round trips times their delays, 30 ms to the primary and 5 ms to a replica.`,
    "",
    "| Request | D1 round trips | of them a replica may serve | p50 ms at 0 ms | p99 at 0 ms | p50 at 30/5 ms | p99 at 30/5 ms | floor at 30/5 ms | p50 over the floor |",
    "|---|---|---|---|---|---|---|---|---|",
    ...rows.map(
      (r) =>
        `| ${r.kind} | ${r.d1_calls} | ${r.replica_calls} | ${r.p50_0} | ${r.p99_0} | ${r.p50_far} | ${r.p99_far} | ${r.floor_far} | ${r.p50_far - r.floor_far} |`,
    ),
    "",
    `Placement, p50 ms: a client far from the primary reaches a Worker at its edge (D1 30 ms to the primary, 5 ms to a replica), or, placed next to the primary, pays ${hop} ms to get there and 1 ms a round trip (the 1/1 ms run plus ${hop}); a client near the primary gets the 1/1 ms run either way.`,
    "",
    "| Request | far client, Worker at the edge | far client, Worker next to the primary | edge / placed | near client, either |",
    "|---|---|---|---|---|",
    ...rows.map((r) => `| ${r.kind} | ${r.edge_far_p50} | ${r.placed_far_p50} | ${(r.edge_far_p50 / r.placed_far_p50).toFixed(2)} | ${r.near_p50} |`),
    "",
  ].join("\n");
}
