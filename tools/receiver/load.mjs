// The receiver's load mode, for the benchmark: /ok/<tag> answers 200; /hang/<tag> never answers
// (the sender's timeout ends it). GET /_arrivals/<tag> returns [[object_id, received_at_ms,
// hook-delivery], ...]. It runs in its own process, so that firing events does not delay the clock
// it stamps arrivals with.

export const LOAD_PATHS = ["ok", "hang", "_arrivals"];

export function loadMode({ hold }) {
  const arrivals = new Map();
  function handle(req, res, body, url) {
    const [, kind, tag] = url.pathname.split("/");
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
    if (!arrivals.has(tag)) arrivals.set(tag, []);
    arrivals.get(tag).push([objectId, receivedAt, req.headers["hook-delivery"] ?? null]);
    if (kind === "hang") return hold(res);
    res.writeHead(200, { "content-type": "text/plain" });
    res.end("ok");
  }
  return { handle };
}
