// The soak's receivers, in their own process. /flaky/<tag> answers each request at random:
// 30% 500, 5% hangs past the sender's 15 s timeout, 5% drops the connection, 5% 429 with
// Retry-After, the rest 200. /gone/<tag> answers 410. GET /_report/<tag> returns what the tag got:
// {requests, answered: {status: n}, delivered: {event id: [hook-delivery, ...]}, duplicates}.
//
//   node soak/receiver.mjs    (prints {"port": N} on its first line)
import { createServer } from "node:http";

const tags = new Map();
const open = new Set();
const tagOf = (tag) => {
  if (!tags.has(tag)) tags.set(tag, { requests: 0, answered: {}, delivered: new Map(), okDeliveries: new Map() });
  return tags.get(tag);
};

const server = createServer((req, res) => {
  const [, kind, tag] = req.url.split("/");
  if (req.method === "GET" && kind === "_report") {
    const t = tagOf(tag);
    res.writeHead(200, { "content-type": "application/json" });
    res.end(
      JSON.stringify({
        requests: t.requests,
        answered: t.answered,
        delivered: Object.fromEntries(t.delivered),
        duplicates: [...t.okDeliveries.values()].filter((n) => n > 1).length,
      }),
    );
    return;
  }
  const chunks = [];
  req.on("data", (chunk) => chunks.push(chunk));
  req.on("end", () => {
    const t = tagOf(tag);
    t.requests++;
    const answer = (status, headers = {}) => {
      t.answered[status] = (t.answered[status] ?? 0) + 1;
      if (status === 200) {
        const delivery = req.headers["hook-delivery"];
        t.okDeliveries.set(delivery, (t.okDeliveries.get(delivery) ?? 0) + 1);
        let eventId = null;
        try {
          eventId = JSON.parse(Buffer.concat(chunks).toString("utf8")).object?.events?.at(-1)?.id ?? null;
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
      open.add(res);
      res.on("close", () => open.delete(res));
      return;
    }
    if (r < 0.4) {
      t.answered.dropped = (t.answered.dropped ?? 0) + 1;
      return req.socket.destroy();
    }
    if (r < 0.45) return answer(429, { "retry-after": "1" });
    answer(200);
  });
});
server.keepAliveTimeout = 60_000;
server.requestTimeout = 0;
server.listen(0, "127.0.0.1", () => console.log(JSON.stringify({ port: server.address().port })));
process.on("SIGTERM", () => {
  for (const res of open) res.destroy();
  server.close(() => process.exit(0));
});
