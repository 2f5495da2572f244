// The webhook scenarios of `npm run bench`: events recorded through the API, deliveries timed at a
// receiver on 127.0.0.1 (tools/receiver/index.mjs in load mode, its own process), and beside them the bare
// queue-to-fetch baseline (tools/bench/baseline/) on the same queue settings, in the same mode.
//
// Event-to-receipt is from the moment the event's request was sent to the moment a delivery for
// its payment arrived. The delivery rate is deliveries over (last arrival - first event sent).
import autocannon from "autocannon";
import { spawn } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { createInterface } from "node:readline";
import { stopGroup } from "../lib/process-group.mjs";
import { SERVICE_ENV } from "./service.mjs";

const NOTE = JSON.stringify({ event_code: "PU15", description: "Bench note", instrument_number: "TR-bench" });

export async function startHookReceiver() {
  const child = spawn(process.execPath, ["tools/receiver/index.mjs", "--port-line"], { stdio: ["ignore", "pipe", "inherit"], detached: true });
  const line = await new Promise((done, fail) => {
    createInterface({ input: child.stdout }).once("line", done);
    child.once("exit", () => fail(new Error("the hook receiver exited")));
  });
  const url = `http://127.0.0.1:${JSON.parse(line).port}`;
  return {
    url,
    arrivals: (tag) => fetch(`${url}/_arrivals/${tag}`).then((r) => r.json()),
    stop: () => stopGroup(child),
  };
}

/** The queue consumer settings of wrangler.toml's first consumer, for the baseline to copy. */
function consumerSettings() {
  const toml = readFileSync("wrangler.toml", "utf8");
  const block = toml.split("[[queues.consumers]]")[1] ?? "";
  const setting = (name) => /=\s*(\d+)/.exec(block.split("\n").find((line) => line.startsWith(name)) ?? "")?.[1];
  return { max_batch_size: setting("max_batch_size") ?? "10", max_batch_timeout: setting("max_batch_timeout") ?? "0" };
}

/** The bare consumer in `wrangler dev`, in the service's mode; returns how to drive it. */
export async function startBaseline({ port, dir }) {
  const settings = consumerSettings();
  mkdirSync(dir, { recursive: true });
  const config = resolve(dir, "baseline.wrangler.toml");
  writeFileSync(
    config,
    [
      'name = "bench-baseline"',
      `main = "${resolve("tools/bench/baseline/worker.js")}"`,
      'compatibility_date = "2026-04-20"',
      "[[queues.producers]]",
      'binding = "QUEUE"',
      'queue = "bench-baseline"',
      "[[queues.consumers]]",
      'queue = "bench-baseline"',
      `max_batch_size = ${settings.max_batch_size}`,
      `max_batch_timeout = ${settings.max_batch_timeout}`,
      "",
    ].join("\n"),
  );
  const child = spawn(
    "node_modules/.bin/wrangler",
    [
      "dev",
      "--config",
      config,
      "--ip",
      "127.0.0.1",
      "--port",
      String(port),
      "--persist-to",
      resolve(dir, "baseline-state"),
      "--show-interactive-dev-session=false",
      "--log-level",
      "error",
    ],
    { env: { ...process.env, ...SERVICE_ENV }, stdio: ["ignore", "ignore", "inherit"], detached: true },
  );
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  while (
    !(await fetch(`${base}/`, { method: "POST", body: JSON.stringify({ url: "", bodies: [] }) }).then(
      (r) => r.ok,
      () => false,
    ))
  ) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error("the baseline did not start");
    await new Promise((done) => setTimeout(done, 250));
  }
  return { base, settings, stop: () => stopGroup(child) };
}

const percentile = (sorted, p) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] : null);

/** Waits until `expected` arrivals are in for every tag, or `timeoutMs` passes; returns them. */
export async function collect(receiver, tags, expected, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const all = await Promise.all(tags.map((tag) => receiver.arrivals(tag)));
    if (all.every((list) => list.length >= expected) || Date.now() > deadline) return all;
    await new Promise((done) => setTimeout(done, 200));
  }
}

/** Figures of one run: what arrived for `tags`, timed against when each payment's event was sent. */
function figures(name, { sentAt, events, acceptedPerS, non2xx, statuses, samples = {}, firstSent, lastAccepted }, arrivalsByTag, extra = {}) {
  const arrivals = arrivalsByTag.flat();
  // The same delivery id twice at a receiver (docs/interface.md allows it, rarely; it should be 0 here).
  const duplicates = arrivals.length - new Set(arrivals.map(([, , deliveryId]) => deliveryId)).size;
  // A payment that took several events (a small scale reuses payments): its k-th arrival at a
  // receiver answers its k-th event sent.
  const latencies = arrivalsByTag
    .flatMap((tagArrivals) => {
      const byPayment = new Map();
      for (const [id, at] of tagArrivals) if (sentAt.has(id)) byPayment.set(id, [...(byPayment.get(id) ?? []), at]);
      return [...byPayment].flatMap(([id, ats]) => ats.sort((a, b) => a - b).map((at, k) => at - (sentAt.get(id)[k] ?? sentAt.get(id).at(-1))));
    })
    .sort((a, b) => a - b);
  const lastArrival = Math.max(...arrivals.map(([, at]) => at));
  return {
    scenario: name,
    events,
    events_per_s: acceptedPerS,
    non_2xx: non2xx,
    non_2xx_statuses: statuses,
    ...(Object.keys(samples).length > 0 ? { non_2xx_samples: samples } : {}),
    deliveries_expected: events * arrivalsByTag.length,
    delivered: arrivals.length,
    duplicates,
    deliveries_per_s: arrivals.length ? Math.round((arrivals.length / Math.max(1, lastArrival - firstSent)) * 1000) : 0,
    e2r_p50_ms: percentile(latencies, 50),
    e2r_p99_ms: percentile(latencies, 99),
    drain_s: arrivals.length ? Math.round(Math.max(0, lastArrival - lastAccepted) / 100) / 10 : null,
    ...extra,
  };
}

/**
 * A second account (through the admin API) with a payment and a subscription to the receiver's
 * `fair-b` tag, for the fairness scenario; `cleanUp` deletes its subscription.
 */
async function otherAccount(base, receiver) {
  const admin = { authorization: "Bearer bench-admin-token", "content-type": "application/json" };
  const post = async (path, body, headers) => {
    const res = await fetch(`${base}${path}`, { method: "POST", headers, body: JSON.stringify(body) });
    const json = await res.json();
    if (res.status !== 201) throw new Error(`${path}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
  const stamp = Date.now();
  const account = await post("/admin/accounts/", { name: `bench-other-${stamp}` }, admin);
  const user = async (role) => {
    const made = await post(`/admin/accounts/${account.id}/api-users/`, { username: `bench-other-${role}-${stamp}`, role }, admin);
    return { authorization: `Basic ${Buffer.from(`${made.username}:${made.password}`).toString("base64")}`, "content-type": "application/json" };
  };
  const [client, processor] = [await user("client"), await user("processor")];
  const buyer = await post("/v1/counterparties/", { internal_id: "B-1", type: "buyer", name: "Other buyer" }, client);
  const supplier = await post("/v1/counterparties/", { internal_id: "S-1", type: "supplier", name: "Other supplier" }, client);
  const invoice = await post("/v1/invoices/", { invoice_number: "O-1", buyer_id: buyer.id, supplier_id: supplier.id, amount_cents: 100 }, client);
  const payment = await post(
    "/v2/payments/",
    { originating_counterparty_id: buyer.id, receiving_counterparty_id: supplier.id, invoice_ids: [invoice.id], payment_method: "ach" },
    client,
  );
  const subscription = await post(
    "/v1/webhooks/",
    {
      event: "payment.changed",
      url: `${receiver.url}/ok/fair-b`,
      content_type: "application/json",
      username: "bench",
      password: "bench-pass",
      payment_status: true,
    },
    client,
  );
  return {
    paymentId: payment.id,
    processor,
    cleanUp: () => fetch(`${base}/v1/webhooks/${subscription.id}/`, { method: "DELETE", headers: client }),
  };
}

/** Subscribes the bench account to the receiver's `/<kind>/<tag>` (kind "ok" or "hang"); returns the subscription's id. */
export async function subscribeReceiver(base, headers, receiver, kind, tag, fields = {}) {
  const response = await fetch(`${base}/v1/webhooks/`, {
    method: "POST",
    headers: { ...headers, "content-type": "application/json" },
    body: JSON.stringify({
      event: "payment.changed",
      url: `${receiver.url}/${kind}/${tag}`,
      content_type: "application/json",
      username: "bench",
      password: "bench-pass",
      payment_status: true,
      ...fields,
    }),
  });
  const body = await response.json();
  if (response.status !== 201) throw new Error(`subscribe: ${response.status} ${JSON.stringify(body)}`);
  return body.id;
}

/**
 * Deletes every subscription of the bench account: a run that was stopped midway leaves its own
 * behind, pointing at a receiver that is gone, and every later event would be delivered to them.
 */
export async function removeSubscriptions(base, headers) {
  for (;;) {
    const page = await (await fetch(`${base}/v1/webhooks/?page_size=1000`, { headers })).json();
    if (!page.results?.length) return;
    for (const { id } of page.results) await fetch(`${base}/v1/webhooks/${id}/`, { method: "DELETE", headers });
  }
}

export async function webhookScenarios({ pick, base, headers, processor, paymentId, payments, smoke, receiver, log, measureRead, invocations }) {
  let nextPayment = Math.floor(payments / 3);
  const created = [];

  async function subscribe(kind, tag, fields = {}) {
    const id = await subscribeReceiver(base, headers, receiver, kind, tag, fields);
    created.push(id);
    return id;
  }
  async function unsubscribeAll() {
    for (const id of created.splice(0)) await fetch(`${base}/v1/webhooks/${id}/`, { method: "DELETE", headers });
  }

  /**
   * Records `events` events, each on its own payment where the scale allows: as fast as the API
   * takes them at `connections`, or, with `rate`, paced (see paced()).
   */
  async function fire(asked, { connections = 10, rate, on } = {}) {
    const ids = on ?? Array.from({ length: asked }, () => paymentId(nextPayment++ % payments));
    const sentAt = new Map();
    const stamp = (id) => sentAt.set(id, [...(sentAt.get(id) ?? []), Date.now()]);
    const firstSent = Date.now();
    let events;
    let non2xx;
    // Which answers were not 2xx, by status (a 409 is a payment at its 100 events).
    const statuses = {};
    const samples = {};
    if (rate) ({ events, non2xx } = await paced(ids, rate, connections, stamp, statuses, samples));
    else {
      let index = 0;
      const result = await autocannon({
        url: `${base}/v2/payments/${ids[0]}/events/`,
        connections,
        amount: asked,
        method: "POST",
        headers: processor,
        body: NOTE,
        requests: [
          {
            setupRequest: (request) => {
              const id = ids[index++ % ids.length];
              stamp(id);
              return { ...request, path: `/v2/payments/${id}/events/` };
            },
          },
        ],
      });
      events = result["2xx"];
      non2xx = result.non2xx;
      for (const [status, { count }] of Object.entries(result.statusCodeStats ?? {}))
        if (!status.startsWith("2")) statuses[status] = (statuses[status] ?? 0) + count;
    }
    const lastAccepted = Date.now();
    return {
      sentAt,
      events,
      firstSent,
      lastAccepted,
      non2xx,
      statuses,
      samples,
      acceptedPerS: Math.round((events / Math.max(1, lastAccepted - firstSent)) * 1000),
    };
  }

  /**
   * Sends the k-th event at k / rate seconds after the first (an open loop: a slow answer does not
   * delay the next send), with at most `connections` requests open. autocannon's rate limit is
   * per connection and per whole second, so its "10 a second over 10 connections" sends all 10
   * at once at each second's start: a burst of 10 every second, not a trickle.
   */
  async function paced(ids, rate, connections, stamp, statuses, samples) {
    const start = Date.now();
    let open = 0;
    let events = 0;
    let non2xx = 0;
    const free = [];
    const pending = [];
    for (const [k, id] of ids.entries()) {
      const due = start + (k * 1000) / rate;
      if (due > Date.now()) await new Promise((done) => setTimeout(done, due - Date.now()));
      while (open >= connections) await new Promise((done) => free.push(done));
      open++;
      stamp(id);
      pending.push(
        fetch(`${base}/v2/payments/${id}/events/`, { method: "POST", headers: processor, body: NOTE })
          .then(
            async (response) => {
              const text = await response.text();
              if (response.status >= 200 && response.status < 300) events++;
              else {
                non2xx++;
                statuses[response.status] = (statuses[response.status] ?? 0) + 1;
                // What the answer said, once per status: whose 503 it was (ours, or the local runtime's).
                samples[response.status] ??= `${response.headers.get("content-type") ?? ""} ${text.slice(0, 200)}`;
              }
            },
            () => {
              non2xx++;
              statuses.network = (statuses.network ?? 0) + 1;
            },
          )
          .finally(() => {
            open--;
            free.shift()?.();
          }),
      );
    }
    await Promise.all(pending);
    return { events, non2xx };
  }

  const rows = [];
  const wait = smoke ? 30_000 : 180_000;
  try {
    // A burst to 3 subscriptions, as fast as the API takes events.
    const runs = (name) => !pick || pick === name;
    const burst = smoke ? 100 : 5000;
    let tags = ["burst-a", "burst-b", "burst-c"];
    let fired;
    if (runs("burst")) {
      // The write scenarios before it end with requests that autocannon gave up on at its deadline
      // but the Worker still runs: let them commit before the subscriptions exist, or their events
      // reach the burst's receivers too.
      await new Promise((done) => setTimeout(done, 2_000));
      for (const tag of tags) await subscribe("ok", tag);
      fired = await fire(burst);
      rows.push(figures(`burst: ${burst} events, 3 subscriptions`, fired, await collect(receiver, tags, fired.events, wait)));
      log(rows.at(-1));
      // Health reads its kept buckets, not the history: a subscription that just took the burst.
      await measureRead?.(
        `webhook stats, 7d, of a subscription with ${fired.events.toLocaleString("en")} attempts`,
        `/v1/webhooks/${created[0]}/stats/?window=7d`,
      );
      await unsubscribeAll();
    }

    // Sustained 100 events/s for 60 s, and a trickle of 10/s, to 3 subscriptions.
    for (const [name, rate, seconds] of [
      ["sustained 100 events/s", 100, smoke ? 2 : 60],
      ["trickle 10 events/s", 10, smoke ? 2 : 30],
    ].filter(([name]) => runs(name.split(" ")[0]))) {
      tags = [1, 2, 3].map((n) => `${name.split(" ")[0]}-${n}`);
      for (const tag of tags) await subscribe("ok", tag);
      fired = await fire(rate * seconds, { connections: Math.min(10, rate), rate });
      rows.push(figures(`${name} for ${seconds} s, 3 subscriptions`, fired, await collect(receiver, tags, fired.events, wait)));
      log(rows.at(-1));
      await unsubscribeAll();
    }

    // Fairness: another account's trickle (1 event a second) while this account bursts.
    if (runs("fairness")) {
      const other = await otherAccount(base, receiver);
      const burstEvents = smoke ? 200 : 10_000;
      tags = ["fair-a-1", "fair-a-2", "fair-a-3"];
      for (const tag of tags) await subscribe("ok", tag);
      let trickling = true;
      const sent = [];
      const trickle = (async () => {
        while (trickling) {
          const at = Date.now();
          const res = await fetch(`${base}/v2/payments/${other.paymentId}/events/`, { method: "POST", headers: other.processor, body: NOTE });
          if (res.status === 201) sent.push(at);
          await new Promise((done) => setTimeout(done, Math.max(0, 1000 - (Date.now() - at))));
        }
      })();
      fired = await fire(burstEvents);
      const burstArrivals = await collect(receiver, tags, fired.events, wait);
      trickling = false;
      await trickle;
      const [trickleArrivals] = await collect(receiver, ["fair-b"], sent.length, wait);
      // One payment takes the trickle's events: the k-th arrival answers the k-th event sent.
      const arrivedAt = trickleArrivals.map(([, at]) => at).sort((a, b) => a - b);
      const delays = sent.map((at, k) => (arrivedAt[k] ?? Infinity) - at).sort((a, b) => a - b);
      const row = figures(`fairness: account A bursts ${burstEvents} events to 3 subscriptions`, fired, burstArrivals);
      row.other_account = {
        events: sent.length,
        delivered: trickleArrivals.length,
        e2r_p50_ms: percentile(delays, 50),
        e2r_p99_ms: percentile(delays, 99),
        e2r_max_ms: delays.at(-1) ?? null,
      };
      rows.push(row);
      log(row);
      console.error(`fairness: account B's trickle ${JSON.stringify(row.other_account)}`);
      await unsubscribeAll();
      await other.cleanUp();
    }

    // Order per payment: 5 changes on each of 1,000 payments, round by round, to one subscription
    // without order and then to one ordered per payment; the ordered one's rate beside the other's.
    if (runs("ordering")) {
      const count = smoke ? 50 : 1000;
      const changes = 5;
      const paymentIds = Array.from({ length: count }, () => paymentId(nextPayment++ % payments));
      const on = Array.from({ length: changes }, () => paymentIds).flat();
      const measured = {};
      // What the consumer's batches cost D1 over a run, a delivery at a time (the development layer's lines).
      const consumed = () => invocations?.().queue ?? { totalD1Calls: 0, totals: {} };
      for (const ordering of ["none", "per_payment"]) {
        tags = [`order-${ordering}`];
        await subscribe("ok", tags[0], { ordering });
        const before = consumed();
        fired = await fire(on.length, { on });
        measured[ordering] = figures(`${count} payments × ${changes} changes, ordering ${ordering}`, fired, await collect(receiver, tags, fired.events, wait));
        // The last records land just after the last arrivals.
        await new Promise((done) => setTimeout(done, 1000));
        const after = consumed();
        const delivered = Math.max(1, measured[ordering].delivered);
        measured[ordering].d1_calls_per_delivery = Math.round(((after.totalD1Calls - before.totalD1Calls) / delivered) * 100) / 100;
        measured[ordering].d1_queries_per_delivery = Math.round((((after.totals.d1Queries ?? 0) - (before.totals.d1Queries ?? 0)) / delivered) * 100) / 100;
        await unsubscribeAll();
      }
      const ordered = measured.per_payment;
      ordered.vs_unordered = measured.none.deliveries_per_s ? Math.round((ordered.deliveries_per_s / measured.none.deliveries_per_s) * 100) / 100 : null;
      rows.push(measured.none, ordered);
      log(measured.none);
      log(ordered);

      // Isolation: the same ordered run while the receiver refuses one payment's deliveries. The
      // others' are not held back by it: all arrive, at the healthy run's pace.
      const refused = paymentIds[0];
      tags = ["order-isolated"];
      created.push(await subscribeReceiver(base, headers, receiver, "failing", `order-isolated/${refused}`, { ordering: "per_payment" }));
      fired = await fire(on.length, { on });
      const others = fired.events - changes;
      const isolated = figures(`the same, ordered, one payment's receiver refusing it throughout`, fired, await collect(receiver, tags, others, wait));
      isolated.deliveries_expected = others;
      isolated.vs_healthy_ordered = ordered.deliveries_per_s ? Math.round((isolated.deliveries_per_s / ordered.deliveries_per_s) * 100) / 100 : null;
      rows.push(isolated);
      log(isolated);
      await unsubscribeAll();
    }

    // Replay (docs/interface.md, "Replay"): a subscription's deliveries of a window sent again,
    // beside the rate they were first delivered at. Here from the log (the archive is read the same
    // way, an object a step); each delivery arrives twice, the second time with `hook-replay`.
    if (runs("replay")) {
      const events = smoke ? 50 : 2000;
      tags = ["replayed"];
      const id = await subscribe("ok", "replayed");
      const since = new Date().toISOString();
      fired = await fire(events);
      const first = figures(`replay: ${events} events first delivered`, fired, await collect(receiver, tags, fired.events, wait));
      rows.push(first);
      log(first);
      const startedAt = Date.now();
      const started = await fetch(`${base}/v1/webhooks/${id}/replay/`, {
        method: "POST",
        headers: { ...headers, "content-type": "application/json" },
        body: JSON.stringify({ since }),
      }).then((res) => res.json());
      const [arrivals] = await collect(receiver, tags, 2 * first.delivered, wait);
      const again = arrivals.filter(([, at]) => at >= startedAt);
      const lastArrival = Math.max(...again.map(([, at]) => at));
      const replay = {
        scenario: `replay of those ${first.delivered} deliveries from the log`,
        count: started.count,
        delivered: again.length,
        duplicates: again.length - new Set(again.map(([, , deliveryId]) => deliveryId)).size,
        deliveries_per_s: again.length ? Math.round((again.length / Math.max(1, lastArrival - startedAt)) * 1000) : 0,
      };
      replay.vs_first_delivery = first.deliveries_per_s ? Math.round((replay.deliveries_per_s / first.deliveries_per_s) * 100) / 100 : null;
      rows.push(replay);
      log(replay);
      await unsubscribeAll();
    }

    // Isolation: two healthy subscriptions beside a third healthy one, then beside one whose
    // receiver never answers. Both have three subscriptions, so each event writes the same three
    // deliveries and only the third receiver differs.
    if (!runs("isolation")) return rows;
    const events = smoke ? 50 : 2000;
    tags = ["alone-1", "alone-2"];
    for (const tag of tags) await subscribe("ok", tag);
    await subscribe("ok", "third");
    fired = await fire(events);
    const alone = figures(`2 healthy subscriptions beside a third healthy one: ${events} events`, fired, await collect(receiver, tags, fired.events, wait));
    rows.push(alone);
    log(alone);
    await unsubscribeAll();

    tags = ["beside-1", "beside-2"];
    for (const tag of tags) await subscribe("ok", tag);
    await subscribe("hang", "hanging");
    fired = await fire(events);
    const beside = figures(`the same 2 beside 1 hanging receiver: ${events} events`, fired, await collect(receiver, tags, fired.events, wait));
    beside.vs_healthy_third = alone.deliveries_per_s ? Math.round((beside.deliveries_per_s / alone.deliveries_per_s) * 100) / 100 : null;
    beside.hanging_attempts_started = (await receiver.arrivals("hanging")).length;
    rows.push(beside);
    log(beside);
  } finally {
    await unsubscribeAll();
  }
  return rows;
}

/** The bare consumer's rate for `count` messages to the receiver. */
export async function baselineScenario({ baseline, receiver, count, log }) {
  const bodies = Array.from({ length: count }, (_, i) => JSON.stringify({ object_id: `b-${i}`, event: "payment.changed" }));
  const tag = `baseline-${Date.now()}`;
  const firstSent = Date.now();
  for (let start = 0; start < count; start += 1000) {
    const response = await fetch(`${baseline.base}/`, {
      method: "POST",
      body: JSON.stringify({ url: `${receiver.url}/ok/${tag}`, bodies: bodies.slice(start, start + 1000) }),
    });
    if (response.status !== 202) throw new Error(`baseline send: ${response.status}`);
  }
  const [arrivals] = await collect(receiver, [tag], count, 180_000);
  const lastArrival = Math.max(...arrivals.map(([, at]) => at));
  const row = {
    scenario: `bare consumer baseline: ${count} messages (max_batch_size ${baseline.settings.max_batch_size}, max_batch_timeout ${baseline.settings.max_batch_timeout})`,
    delivered: arrivals.length,
    deliveries_per_s: Math.round((arrivals.length / Math.max(1, lastArrival - firstSent)) * 1000),
  };
  log(row);
  return row;
}
