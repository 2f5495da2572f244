// The drain scenario of `npm run bench`: the delivery pipeline's own pace, with no event being
// written beside it. The burst's rate is bounded by how fast the API takes events (locally the API,
// the consumer, D1 and the queue broker share one workerd thread); here the deliveries are already
// written, as a queue outage leaves them, and the rate is the consumer's alone, to compare with the
// bare consumer's in the same run.
//
// 1. The service runs with every queue send failing (QUEUE_SEND_FAILURES=1, a local-only setting):
//    EVENTS events are recorded through the API to 3 subscriptions; each answers 201 and leaves its
//    3 deliveries committed and never handed to the queue. None may arrive meanwhile.
// 2. The service restarts with the queue working; one cron sweep hands every delivery over (rounds
//    of 500, up to 60,000 a sweep) and the consumer delivers them. The rate is deliveries over
//    (last arrival - the sweep's start): the sweep's own work is counted.
import autocannon from "autocannon";
import { startService } from "./service.mjs";
import { collect, removeSubscriptions, subscribeReceiver } from "./webhooks.mjs";

const NOTE = JSON.stringify({ event_code: "PU15", description: "Bench drain", instrument_number: "TR-drain" });

export async function drainScenario({ dir, port, receiver, headers, processor, paymentId, payments, smoke, log }) {
  const events = smoke ? 100 : 5000;
  const tags = ["drain-1", "drain-2", "drain-3"].map((tag) => `${tag}-${Date.now()}`);

  const outage = await startService({ dir, port, vars: { QUEUE_SEND_FAILURES: "1" } });
  let written;
  let refused;
  try {
    await removeSubscriptions(outage.base, headers);
    for (const tag of tags) await subscribeReceiver(outage.base, headers, receiver, "ok", tag);
    // Payments from 5% of the table on, one event each (the other scenarios use later ones).
    const first = Math.floor(payments * 0.05);
    let index = 0;
    const pathOf = () => `/v2/payments/${paymentId((first + index++) % payments)}/events/`;
    const result = await autocannon({
      url: `${outage.base}${pathOf()}`,
      connections: 10,
      amount: events,
      method: "POST",
      headers: processor,
      body: NOTE,
      requests: [{ setupRequest: (request) => ({ ...request, path: pathOf() }) }],
    });
    // A 409 is a payment at its 100 events, which a small state reused run after run reaches
    // (the smoke's 100 payments); its event writes nothing. Any other answer fails the scenario.
    written = result["2xx"];
    refused = result.statusCodeStats?.["409"]?.count ?? 0;
    if (written === 0 || result.non2xx !== refused)
      throw new Error(`drain: ${written} of ${events} events answered 2xx, ${result.non2xx - refused} neither 2xx nor 409`);
    const early = (await Promise.all(tags.map((tag) => receiver.arrivals(tag)))).flat().length;
    if (early > 0) throw new Error(`drain: ${early} deliveries arrived while every queue send failed`);
  } finally {
    await outage.stop();
  }

  const service = await startService({ dir, port, scheduled: true });
  try {
    const sweptAt = Date.now();
    const fire = () => fetch(`${service.base}/__scheduled?cron=${encodeURIComponent("* * * * *")}`);
    const sweep = await fire();
    if (!sweep.ok) throw new Error(`drain: the cron answered ${sweep.status}`);
    // A run hands over at most its budget of queue messages (src/cron.ts); the next runs go on, a
    // run every 5 s here in place of Cloudflare's minute.
    const runs = setInterval(() => void fire().catch(() => {}), 5_000);
    const expected = written * tags.length;
    const arrivals = (await collect(receiver, tags, written, smoke ? 30_000 : 180_000).finally(() => clearInterval(runs))).flat();
    const lastArrival = Math.max(sweptAt, ...arrivals.map(([, at]) => at));
    const row = {
      scenario: `drain: ${expected} deliveries a queue outage left (${written} events, 3 subscriptions), handed over by cron runs of at most 10,000 messages, one every 5 s`,
      non_2xx: refused,
      deliveries_expected: expected,
      delivered: arrivals.length,
      duplicates: arrivals.length - new Set(arrivals.map(([, , deliveryId]) => deliveryId)).size,
      deliveries_per_s: Math.round((arrivals.length / Math.max(1, lastArrival - sweptAt)) * 1000),
      drain_s: Math.round((lastArrival - sweptAt) / 100) / 10,
    };
    log(row);
    await removeSubscriptions(service.base, headers);
    row.invocations = service.invocations();
    return row;
  } finally {
    await service.stop();
  }
}
