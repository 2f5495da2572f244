// The one webhook receiver of the tools and tests, on 127.0.0.1, with a mode per path:
//   /ok/, /hang/, /_arrivals/         load mode (the benchmark): load.mjs
//   /flaky/, /gone/, /_report/        fault mode (the soak): faults.mjs
//   /endless/, /_endless/             an answer that never ends (the tests): endless.mjs
//   anything else                     verifying mode (npm run receiver, the tests): verify.mjs
//
//   npm run receiver -- --subscription <id>   (its secret and credentials read through the API)
//   WEBHOOK_SECRET=whsec_… WEBHOOK_USERNAME=hook-user WEBHOOK_PASSWORD=hook-pass npm run receiver
//   (an ed25519 subscription: WEBHOOK_PUBLIC_KEY=whpk_… as well)
//   node tools/receiver/index.mjs --port-line    (a free port, quiet; prints {"port": N} first)
import { existsSync } from "node:fs";
import { createServer } from "node:http";
import { parseArgs } from "node:util";
import { readDevVars } from "../lib/dev-vars.mjs";
import { errorText, serviceClient } from "../../packages/cli/api.js";
import { pathToFileURL } from "node:url";
import { ENDLESS_PATHS, endlessMode } from "./endless.mjs";
import { FAULT_PATHS, faultMode } from "./faults.mjs";
import { LOAD_PATHS, loadMode } from "./load.mjs";
import { verifyMode } from "./verify.mjs";

export { verifyDelivery } from "./verify.mjs";

export function startReceiver({ port = 0, host = "127.0.0.1", defaults = null, quiet = false } = {}) {
  // Responses held open on purpose (a hanging receiver), ended when the receiver closes.
  const held = new Set();
  const hold = (res) => {
    held.add(res);
    res.on("close", () => held.delete(res));
  };
  const verify = verifyMode({ defaults, quiet });
  const modes = [
    [LOAD_PATHS, loadMode({ hold })],
    [FAULT_PATHS, faultMode({ hold })],
    [ENDLESS_PATHS, endlessMode({ hold })],
  ];
  const server = createServer((req, res) => {
    const chunks = [];
    req.on("data", (chunk) => chunks.push(chunk));
    req.on("end", () => {
      const url = new URL(req.url, "http://receiver");
      const first = url.pathname.split("/")[1];
      const mode = modes.find(([paths]) => paths.includes(first))?.[1] ?? verify;
      mode.handle(req, res, Buffer.concat(chunks).toString("utf8"), url);
    });
  });
  server.keepAliveTimeout = 60_000;
  server.requestTimeout = 0;
  return new Promise((resolve) => {
    server.listen(port, host, () => {
      const address = server.address();
      resolve({
        url: `http://${host}:${address.port}`,
        port: address.port,
        close: () => {
          for (const res of held) res.destroy();
          return new Promise((done) => server.close(done));
        },
        received: verify.received,
        configs: verify.configs,
      });
    });
  });
}

/**
 * What a subscription's deliveries verify against, read through the API as the demo client
 * (`npm start`'s .dev.vars; PAYMENTS_API_URL, PAYMENTS_API_USERNAME and PAYMENTS_API_PASSWORD
 * name another service or user): its secret, public key and Basic credentials.
 */
export async function subscriptionDefaults(id, env = process.env) {
  const vars = existsSync(".dev.vars") ? readDevVars(".dev.vars") : {};
  const username = env.PAYMENTS_API_USERNAME ?? "demo-client";
  const password = env.PAYMENTS_API_PASSWORD ?? vars.DEMO_CLIENT_PASSWORD;
  if (!password) throw new Error("no API password: run npm start first (it writes .dev.vars), or set PAYMENTS_API_PASSWORD.");
  const service = serviceClient({ url: env.PAYMENTS_API_URL ?? "http://127.0.0.1:8787", username, password });
  const { status, json } = await service.request("GET", `/v1/webhooks/${encodeURIComponent(id)}/`);
  if (status !== 200) throw new Error(`GET /v1/webhooks/${id}/ as ${username} answered ${status}: ${errorText(json)}`);
  return { secret: json.secret, publicKey: json.public_key ?? undefined, username: json.username, password: json.password };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const { values } = parseArgs({ options: { "port-line": { type: "boolean" }, subscription: { type: "string" } } });
  const portLine = values["port-line"] ?? false;
  const { WEBHOOK_SECRET, WEBHOOK_PUBLIC_KEY, WEBHOOK_USERNAME = "", WEBHOOK_PASSWORD = "", RECEIVER_PORT = "9999" } = process.env;
  let defaults = WEBHOOK_SECRET
    ? { secret: WEBHOOK_SECRET, publicKey: WEBHOOK_PUBLIC_KEY || undefined, username: WEBHOOK_USERNAME, password: WEBHOOK_PASSWORD }
    : null;
  if (values.subscription) {
    try {
      defaults = await subscriptionDefaults(values.subscription);
    } catch (error) {
      console.error(`npm run receiver: cannot read subscription ${values.subscription}: ${error.message}`);
      process.exit(1);
    }
    console.log(`Verifying against subscription ${values.subscription} (its secret and credentials, read through the API).`);
  }
  const receiver = await startReceiver({ port: portLine ? 0 : Number(RECEIVER_PORT), defaults, quiet: portLine });
  if (portLine) console.log(JSON.stringify({ port: receiver.port }));
  else {
    console.log(`Receiving webhooks at ${receiver.url}/hooks`);
    if (!defaults)
      console.log(
        "To verify deliveries: npm run receiver -- --subscription <id> (or set WEBHOOK_SECRET, WEBHOOK_USERNAME and WEBHOOK_PASSWORD, and WEBHOOK_PUBLIC_KEY for an ed25519 subscription).",
      );
  }
  for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => receiver.close().then(() => process.exit(0)));
}
