// `listen --serve <port>`: the push side of listen. It takes the service's pushes on
// 127.0.0.1:<port> (the subscription's `url` points there: directly when the service runs on this
// machine, or through a tunnel of yours), checks each with the receiver's kit (packages/verify),
// answers endpoint-ownership challenges by itself, and forwards every other delivery to the local
// URL, answering the service with that URL's status: a refusal there is a failed attempt, retried
// by the service as usual. Nothing is read from the feed in this mode.
import { createServer } from "node:http";
import { CliError } from "../api.js";
import { challengeAnswer, verify } from "../../verify/index.js";
import { forward } from "./forward.js";
import { checkListenArgs, findSubscription, publishedKeys, statusLine } from "./subscription.js";

/** The largest body taken; a larger one is answered 413 and not forwarded. */
export const MAX_BODY_BYTES = 16 * 1024 * 1024;
/** Headers of the hop from the service, not of the delivery: never forwarded. */
const HOP_HEADERS = new Set(["host", "connection", "content-length", "transfer-encoding", "keep-alive", "expect"]);

/** Reads a request's body up to `limit` bytes; null when it is larger. */
function readBody(req, limit) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let size = 0;
    req.on("data", (chunk) => {
      size += chunk.length;
      if (size > limit) {
        resolve(null);
        req.destroy();
      } else chunks.push(chunk);
    });
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

/** The headers a delivery came with, as a plain object, without the hop's own. Pure. */
export function deliveryHeaders(raw) {
  return Object.fromEntries(
    Object.entries(raw)
      .filter(([name, value]) => !HOP_HEADERS.has(name) && value !== undefined)
      .map(([name, value]) => [name, Array.isArray(value) ? value.join(", ") : value]),
  );
}

const answer = (res, status, body) => res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));

export async function serve(service, { subscription, forwardTo, port, secrets = [], username, password, out = process.stdout, signal }) {
  checkListenArgs({ subscription, forwardTo });
  if (!Number.isInteger(port)) throw new CliError("--serve needs a port, e.g. --serve 4001.");
  const found = await findSubscription(service, subscription);
  const keys = publishedKeys(service, found);
  if (!keys && secrets.length === 0)
    throw new CliError(
      `Subscription ${subscription} signs with HMAC: pass --secret whsec_… (shown when it was made, and by rotate-secret) so that what reaches this port is checked. An ed25519 subscription needs none: its keys are published.`,
    );
  const status = statusLine(out);
  const checks = { ...(keys ? { keys } : { secrets }), username, password };
  let forwarded = 0;

  async function handle(req, res) {
    if (req.method !== "POST") return answer(res, 405, { detail: "Deliveries are POSTed." });
    const body = await readBody(req, MAX_BODY_BYTES);
    if (body === null) {
      status.note(`A delivery over ${MAX_BODY_BYTES} bytes was refused (413).`);
      return answer(res, 413, { detail: `Over ${MAX_BODY_BYTES} bytes.` });
    }
    const headers = deliveryHeaders(req.headers);
    const check = await verify({ body, headers, ...checks });
    if (!check.ok) {
      status.note(`Refused a request that does not verify (${check.reason}): ${check.detail ?? ""}`.trim());
      return answer(res, 401, { detail: `Not verified: ${check.reason}.` });
    }
    const challenge = challengeAnswer({ body, headers });
    if (challenge) {
      status.note(`Answered the service's ownership challenge for ${subscription}: its held deliveries go out once it is verified.`);
      return answer(res, 200, challenge);
    }
    const started = Date.now();
    const label = `#${headers["hook-sequence"] ?? "?"} ${headers["hook-event"] ?? "delivery"}${headers["hook-replay"] ? " (replay)" : ""}`;
    try {
      const code = await forward(forwardTo, { headers, body });
      if (code >= 200 && code <= 299) forwarded += 1;
      status.note(`${label} -> ${code} (${Date.now() - started} ms)`);
      return answer(res, code >= 200 && code <= 299 ? 200 : 502, { forwarded_status: code });
    } catch (error) {
      status.note(`${label}: ${error.message} The service will send it again.`);
      return answer(res, 502, { detail: error.message });
    }
  }

  const server = createServer((req, res) =>
    handle(req, res).catch((error) => {
      status.note(`Could not handle a request: ${error.message}`);
      if (!res.headersSent) answer(res, 500, { detail: "The listener failed; the service will send it again." });
    }),
  );
  await new Promise((resolve, reject) => {
    server.once("error", (error) =>
      reject(
        new CliError(error.code === "EADDRINUSE" ? `Port ${port} is taken: pick another with --serve.` : `Cannot listen on port ${port}: ${error.message}`),
      ),
    );
    server.listen(port, "127.0.0.1", resolve);
  });
  const here = `http://127.0.0.1:${server.address().port}/`;
  status.note(
    `Serving ${subscription} at ${here} (its url is ${found.url}); forwarding to ${forwardTo}, each checked with ${keys ? `the keys at ${keys.url}` : "the secret given"}; ownership challenges answered here. Ctrl-C stops.`,
  );
  await new Promise((resolve) => (signal?.aborted ? resolve() : signal?.addEventListener("abort", resolve, { once: true })));
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  status.note(`Stopped: ${forwarded} forwarded.`);
  return forwarded;
}
