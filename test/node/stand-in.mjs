// A stand-in HTTP server on 127.0.0.1 for the command line's tests: it plays the API's part, or a
// local target's. `handler(req, res, body)` gets the whole body as text.
import { createServer } from "node:http";

export function standIn(handler) {
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => handler(req, res, body));
  });
  return new Promise((done) =>
    server.listen(0, "127.0.0.1", () =>
      done({ url: `http://127.0.0.1:${server.address().port}`, close: () => (server.closeAllConnections(), new Promise((closed) => server.close(closed))) }),
    ),
  );
}

/** Answers `body` as JSON with `status`. */
export const json = (res, status, body) => res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
