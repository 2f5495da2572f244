// The receiver's load mode, for the benchmark: /ok/<tag> answers 200; /hang/<tag> never answers
// (the sender's timeout ends it); /failing/<tag>/<object_id> answers 503 (Retry-After: 5) to the
// deliveries of that object and 200 to the others. GET /_arrivals/<tag> returns [[object_id, received_at_ms,
// hook-delivery], ...]. It runs in its own process, so that firing events does not delay the clock
// it stamps arrivals with.

export const LOAD_PATHS = ["ok", "hang", "failing", "_arrivals"];

export function loadMode({ hold }) {
  const arrivals = new Map();
  function handle(req, res, body, url) {
    const [, kind, tag, failing] = url.pathname.split("/");
    if (req.method === "GET" && kind === "_arrivals") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(arrivals.get(tag) ?? []));
      return;
    }
    const receivedAt = Date.now();
    let objectId = null;
    try {
      objectId = JSON.parse(body).object_id ?? null;
    } catch {}
    if (kind === "failing" && objectId === failing) {
      // Refused: not an arrival.
      res.writeHead(503, { "content-type": "text/plain", "retry-after": "5" });
      res.end("unavailable");
      return;
    }
    if (!arrivals.has(tag)) arrivals.set(tag, []);
    arrivals.get(tag).push([objectId, receivedAt, req.headers["hook-delivery"] ?? null]);
    if (kind === "hang") return hold(res);
    res.writeHead(200, { "content-type": "text/plain" });
    res.end("ok");
  }
  return { handle };
}
