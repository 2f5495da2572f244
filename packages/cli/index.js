#!/usr/bin/env node
// The Payments service's command line: `node packages/cli <command>`, or `npx payments <command>`.
import { parseArgs } from "node:util";
import { realpathSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { CliError, serviceClient } from "./api.js";
import { listen } from "./commands/listen.js";
import { serve } from "./commands/serve.js";
import { DEFAULT_STATUSES, trigger } from "./commands/trigger.js";
import { verifySaved } from "./commands/verify.js";

export const USAGE = `Usage: payments <command> [options]   (node packages/cli <command> from the repository)

Commands:
  listen --subscription <id> --forward-to <url>
      Reads the subscription's feed from its acked position and POSTs each delivery, with the
      headers it would be pushed with (signed now), to <url>; acks each after a 2xx. Stop it,
      restart it, close the laptop: it goes on where it left off. A paused subscription plus
      listen is a pull-only subscription: nothing needs to reach your machine.
      --limit <n>        deliveries per feed read (1-1000, default 100)
      --serve <port>     push instead of pull: take the service's pushes on 127.0.0.1:<port>
                         (the subscription's url points there, or at your tunnel to it), check
                         each (an hmac subscription needs --secret whsec_…; an ed25519 one is
                         checked with its published keys), answer ownership challenges here,
                         and forward the rest to <url>. [--hook-username u --hook-password p]

  trigger [--payment <id>] [--statuses in-progress,settled]
      Makes a payment (or takes --payment) and records an event per status, so every
      subscription of the account gets a delivery per step. Run it as a processor user.

  verify <file> --secret <whsec_…> [--public-key <whpk_…>] [--hook-username <u> --hook-password <p>] [--tolerance <s>]
      Checks a saved delivery: a JSON file with "body" and "headers" (a delivery record from
      GET /v1/webhooks/{id}/deliveries/{delivery_id}/, or a feed item read with signed=true).
      The timestamp is not checked unless --tolerance is given. "-" reads standard input.
      Exits 0 when it is genuine, 1 when not (the reason is printed).

The service and an API user (listen, trigger):
  --url <url>           or PAYMENTS_API_URL       (default http://127.0.0.1:8787)
  --username <name>     or PAYMENTS_API_USERNAME
  --password <secret>   or PAYMENTS_API_PASSWORD
  --help                this text

With npm start's demo data:
  source .dev.vars
  export PAYMENTS_API_USERNAME=demo-client PAYMENTS_API_PASSWORD=$DEMO_CLIENT_PASSWORD
  node packages/cli listen --subscription <id> --forward-to http://127.0.0.1:4000/webhooks
  PAYMENTS_API_USERNAME=demo-processor PAYMENTS_API_PASSWORD=$DEMO_PROCESSOR_PASSWORD node packages/cli trigger
`;

const OPTIONS = {
  url: { type: "string" },
  username: { type: "string" },
  password: { type: "string" },
  subscription: { type: "string" },
  "forward-to": { type: "string" },
  limit: { type: "string" },
  serve: { type: "string" },
  payment: { type: "string" },
  statuses: { type: "string" },
  secret: { type: "string", multiple: true },
  "public-key": { type: "string", multiple: true },
  "hook-username": { type: "string" },
  "hook-password": { type: "string" },
  tolerance: { type: "string" },
  help: { type: "boolean", short: "h" },
};

function service(values, env) {
  const url = values.url ?? env.PAYMENTS_API_URL ?? "http://127.0.0.1:8787";
  const username = values.username ?? env.PAYMENTS_API_USERNAME;
  const password = values.password ?? env.PAYMENTS_API_PASSWORD;
  if (!username || !password)
    throw new CliError("Set PAYMENTS_API_USERNAME and PAYMENTS_API_PASSWORD (or --username and --password): an API user of your account.");
  try {
    new URL(url);
  } catch {
    throw new CliError(`The service's address is not a URL: ${url} (PAYMENTS_API_URL or --url).`);
  }
  return serviceClient({ url, username, password });
}

function whole(text, name, min, max) {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!Number.isInteger(n) || n < min || n > max) throw new CliError(`--${name} must be a whole number from ${min} to ${max}.`);
  return n;
}

/** Runs one command line; answers the exit code. */
export async function main(argv, { env = process.env, out = process.stdout, err = process.stderr, signal } = {}) {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    err.write(`${error.message}\nRun with --help for usage.\n`);
    return 2;
  }
  const { values, positionals } = parsed;
  const [command, ...rest] = positionals;
  if (values.help || command === "help" || command === undefined) {
    out.write(USAGE);
    return command === undefined && !values.help ? 2 : 0;
  }
  try {
    if (command === "listen" && values.serve !== undefined) {
      await serve(service(values, env), {
        subscription: values.subscription,
        forwardTo: values["forward-to"],
        port: whole(values.serve, "serve", 1, 65535),
        secrets: values.secret ?? [],
        username: values["hook-username"],
        password: values["hook-password"],
        out,
        signal,
      });
      return 0;
    }
    if (command === "listen") {
      await listen(service(values, env), {
        subscription: values.subscription,
        forwardTo: values["forward-to"],
        limit: whole(values.limit, "limit", 1, 1000),
        out,
        signal,
      });
      return 0;
    }
    if (command === "trigger") {
      const statuses = values.statuses
        ? values.statuses
            .split(",")
            .map((s) => s.trim())
            .filter(Boolean)
        : DEFAULT_STATUSES;
      await trigger(service(values, env), { payment: values.payment, statuses, out });
      return 0;
    }
    if (command === "verify") {
      const ok = await verifySaved({
        file: rest[0],
        secrets: [...(values.secret ?? []), ...(values["public-key"] ?? [])],
        username: values["hook-username"],
        password: values["hook-password"],
        toleranceSec: values.tolerance === undefined ? Infinity : whole(values.tolerance, "tolerance", 0, 10 ** 9),
        out,
      });
      return ok ? 0 : 1;
    }
    err.write(`Unknown command "${command}": use listen, trigger or verify (--help).\n`);
    return 2;
  } catch (error) {
    if (error instanceof CliError) {
      err.write(`${error.message}\n`);
      return 1;
    }
    throw error;
  }
}

/** Whether this file is what node was asked to run (directly, as the package's folder, or through a bin link). */
function isMain() {
  try {
    const ran = realpathSync(process.argv[1] ?? "");
    return [ran, join(ran, "index.js")].some((path) => pathToFileURL(path).href === import.meta.url);
  } catch {
    return false;
  }
}

if (isMain()) {
  const stop = new AbortController();
  for (const name of ["SIGINT", "SIGTERM"]) {
    process.on(name, () => {
      if (stop.signal.aborted) process.exit(130);
      stop.abort();
    });
  }
  process.exitCode = await main(process.argv.slice(2), { signal: stop.signal });
}
