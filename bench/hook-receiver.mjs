// The benchmark's webhook receiver, in its own process so that firing events does not delay the
// clock it stamps arrivals with. Paths: /ok/<tag> answers 200; /hang/<tag> never answers (the
// sender's timeout ends it). GET /_arrivals/<tag> returns [[object_id, received_at_ms, hook-delivery], ...].
//
//   node bench/hook-receiver.mjs    (prints {"port": N} on its first line)
import { createServer } from "node:http";

const arrivals = new Map();
const hanging = new Set();
const server = createServer((req, res) => {
  const [, kind, tag] = req.url.split("/");
  if (req.method === "GET" && kind === "_arrivals") {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify(arrivals.get(tag) ?? []));
    return;
  }
  const chunks = [];
  req.on("data", (chunk) => chunks.push(chunk));
  req.on("end", () => {
    const receivedAt = Date.now();
    let objectId = null;
    try {
      objectId = JSON.parse(Buffer.concat(chunks).toString("utf8")).object_id ?? null;
    } catch {}
    if (!arrivals.has(tag)) arrivals.set(tag, []);
    arrivals.get(tag).push([objectId, receivedAt, req.headers["hook-delivery"] ?? null]);
    if (kind === "hang") {
      hanging.add(res);
      res.on("close", () => hanging.delete(res));
      return;
    }
    res.writeHead(200, { "content-type": "text/plain" });
    res.end("ok");
  });
});
server.keepAliveTimeout = 60_000;
server.requestTimeout = 0;
server.listen(0, "127.0.0.1", () => console.log(JSON.stringify({ port: server.address().port })));
process.on("SIGTERM", () => {
  for (const res of hanging) res.destroy();
  server.close(() => process.exit(0));
});
