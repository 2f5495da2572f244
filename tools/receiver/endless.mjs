// The receiver's endless mode: /endless/<tag> answers 200 and streams its body without end, 64 KiB
// at a time as fast as the sender reads it, until the sender goes away. GET /_endless/<tag>
// returns {requests, bytes_sent, open}: how much the sender read before it hung up.

export const ENDLESS_PATHS = ["endless", "_endless"];

const CHUNK = Buffer.alloc(64 * 1024, "x");

export function endlessMode({ hold }) {
  const tags = new Map();
  function handle(req, res, _body, url) {
    const [, kind, tag] = url.pathname.split("/");
    if (!tags.has(tag)) tags.set(tag, { requests: 0, bytes_sent: 0, open: 0 });
    const t = tags.get(tag);
    if (req.method === "GET" && kind === "_endless") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(t));
      return;
    }
    t.requests++;
    t.open++;
    hold(res);
    res.on("close", () => t.open--);
    res.writeHead(200, { "content-type": "text/plain" });
    const pump = () => {
      while (!res.destroyed) {
        t.bytes_sent += CHUNK.length;
        if (!res.write(CHUNK)) return res.once("drain", pump);
      }
    };
    pump();
  }
  return { handle };
}
