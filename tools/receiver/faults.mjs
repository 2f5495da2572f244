// The receiver's fault mode, for the soak. /flaky/<tag> answers each request at random: 30% 500,
// 5% hangs past the sender's 15 s timeout, 5% drops the connection, 5% 429 with Retry-After, the
// rest 200. /gone/<tag> answers 410. GET /_report/<tag> returns what the tag got:
// {requests, answered: {status: n}, delivered: {event id: [hook-delivery, ...]}, duplicates,
// sequence: {highest, gaps}}: the highest hook-sequence answered 200, and the numbers below it
// never answered 200 (a subscription's sequence has no gaps, so once every delivery is through,
// there are none).

export const FAULT_PATHS = ["flaky", "gone", "_report"];

export function faultMode({ hold }) {
  const tags = new Map();
  const tagOf = (tag) => {
    if (!tags.has(tag)) tags.set(tag, { requests: 0, answered: {}, delivered: new Map(), okDeliveries: new Map(), sequences: new Set() });
    return tags.get(tag);
  };
  function handle(req, res, body, url) {
    const [, kind, tag] = url.pathname.split("/");
    const t = tagOf(tag);
    if (req.method === "GET" && kind === "_report") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          requests: t.requests,
          answered: t.answered,
          delivered: Object.fromEntries(t.delivered),
          duplicates: [...t.okDeliveries.values()].filter((n) => n > 1).length,
          sequence: sequenceOf(t.sequences),
        }),
      );
      return;
    }
    t.requests++;
    const answer = (status, headers = {}) => {
      t.answered[status] = (t.answered[status] ?? 0) + 1;
      if (status === 200) {
        const delivery = req.headers["hook-delivery"];
        t.okDeliveries.set(delivery, (t.okDeliveries.get(delivery) ?? 0) + 1);
        if (req.headers["hook-sequence"]) t.sequences.add(Number(req.headers["hook-sequence"]));
        let eventId = null;
        try {
          eventId = JSON.parse(body).object?.events?.at(-1)?.id ?? null;
        } catch {}
        if (eventId) t.delivered.set(eventId, [...(t.delivered.get(eventId) ?? []), delivery]);
      }
      res.writeHead(status, { "content-type": "text/plain", ...headers });
      res.end(String(status));
    };
    if (kind === "gone") return answer(410);
    const r = Math.random();
    if (r < 0.3) return answer(500);
    if (r < 0.35) {
      t.answered.hang = (t.answered.hang ?? 0) + 1;
      return hold(res);
    }
    if (r < 0.4) {
      t.answered.dropped = (t.answered.dropped ?? 0) + 1;
      return req.socket.destroy();
    }
    if (r < 0.45) return answer(429, { "retry-after": "1" });
    answer(200);
  }
  return { handle };
}

/** The highest sequence number seen, and every one below it not seen. */
function sequenceOf(seen) {
  const highest = Math.max(0, ...seen);
  const gaps = [];
  for (let n = 1; n <= highest; n++) if (!seen.has(n)) gaps.push(n);
  return { highest, gaps };
}
