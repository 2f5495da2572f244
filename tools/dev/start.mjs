// `npm start`: local secrets, migrations, demo data, then the Worker on 127.0.0.1 with its queue
// consumer and cron trigger. Everything runs embedded; no Cloudflare account is needed.
import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { readDevVars as readVarsFile, writeDevVars } from "../lib/dev-vars.mjs";
import { migrateAll, shardNames, wranglerSync } from "../lib/d1.mjs";
import { DEMO_ACCOUNT, demoDirectorySql, demoShardSql } from "./demo-seed.mjs";

const PORT = process.env.PORT ?? "8787";
const STATE_DIR = ".wrangler/state";
const ENV = { ...process.env, CLOUDFLARE_CF_FETCH_ENABLED: "false", WRANGLER_SEND_METRICS: "false" };
const WRANGLER = "node_modules/.bin/wrangler";
const wrangler = (args, options = {}) => spawnSync(WRANGLER, args, { stdio: "inherit", env: ENV, encoding: "utf8", ...options });

/** Resolves when nothing listens on 127.0.0.1:port; says so in one line and exits otherwise. */
function requireFreePort(port) {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once("error", (error) => {
      const why = error.code === "EADDRINUSE" ? "is in use" : `cannot be used (${error.code})`;
      console.error(`npm start: port ${port} on 127.0.0.1 ${why}; run PORT=${Number(port) + 1} npm start to use another.`);
      process.exit(1);
    });
    probe.listen(Number(port), "127.0.0.1", () => probe.close(resolve));
  });
}

function readDevVars() {
  if (!existsSync(".dev.vars")) {
    if (existsSync(STATE_DIR)) {
      // The local database's subscriptions are sealed with the old ENCRYPTION_KEY, which went with
      // the old .dev.vars: a fresh key must not silently sit under them. Keep them aside instead.
      const aside = `${STATE_DIR}-before-${new Date().toISOString().replace(/[:.]/g, "-")}`;
      renameSync(STATE_DIR, aside);
      console.log(
        `No .dev.vars, so new secrets are made. The local database was sealed with the old ENCRYPTION_KEY: it is kept in ${aside}, and a fresh one starts now.`,
      );
    }
    const secret = () => randomBytes(32).toString("base64url");
    writeDevVars(
      ".dev.vars",
      {
        ADMIN_TOKEN: secret(),
        ENCRYPTION_KEY: randomBytes(32).toString("base64"),
        ALLOW_LOCAL_WEBHOOK_URLS: "true",
        DEMO_CLIENT_PASSWORD: secret(),
        DEMO_PROCESSOR_PASSWORD: secret(),
      },
      [
        "Made by `npm start`; never commit. Deleting it makes new secrets and starts a fresh local database",
        "(the old one is moved aside: its webhook secrets are sealed with this ENCRYPTION_KEY).",
      ],
    );
    console.log("Wrote .dev.vars with fresh secrets.");
  }
  return readVarsFile(".dev.vars");
}

/** A setup step's output is shown only when it fails. */
function run(step, result) {
  if (result.status !== 0) {
    process.stderr.write(`${result.stdout ?? ""}${result.stderr ?? ""}`);
    console.error(`npm start: ${step} failed.`);
    process.exit(result.status ?? 1);
  }
}

/**
 * One service per checkout: a second `npm start` (on another PORT, say) would migrate and seed the
 * same local database and run a second queue consumer and cron on it. The first one keeps its
 * process id and port in LOCK while it runs; the second refuses, naming it.
 */
const LOCK = ".wrangler/npm-start.json";
function claimCheckout() {
  if (existsSync(LOCK)) {
    let held = {};
    try {
      held = JSON.parse(readFileSync(LOCK, "utf8"));
    } catch {} // unreadable: left by a start cut short, as a stale one
    const { pid, port } = held;
    let alive = false;
    try {
      alive = Number.isInteger(pid) && process.kill(pid, 0);
    } catch (error) {
      alive = error.code === "EPERM";
    }
    if (alive) {
      console.error(
        `npm start: this checkout's service already runs (process ${pid}, http://127.0.0.1:${port}) on its local database; use that one, or stop it first (kill ${pid}). A second service would share its database, queue consumer and cron.`,
      );
      process.exit(1);
    }
  }
  mkdirSync(".wrangler", { recursive: true });
  writeFileSync(LOCK, JSON.stringify({ pid: process.pid, port: Number(PORT) }));
  process.on("exit", () => {
    try {
      if (JSON.parse(readFileSync(LOCK, "utf8")).pid === process.pid) rmSync(LOCK);
    } catch {}
  });
}

claimCheckout();
await requireFreePort(PORT);
const vars = readDevVars();
for (const name of ["ADMIN_TOKEN", "ENCRYPTION_KEY", "DEMO_CLIENT_PASSWORD", "DEMO_PROCESSOR_PASSWORD"]) {
  if (!vars[name]) {
    console.error(`npm start: .dev.vars has no ${name}; delete .dev.vars to have it made again.`);
    process.exit(1);
  }
}

const failed = migrateAll();
if (failed.length > 0) {
  for (const { binding, output } of failed) process.stderr.write(`${binding}:\n${output}`);
  console.error("npm start: applying migrations failed.");
  process.exit(1);
}
// The demo account stays on the shard it was placed on; the first time, it goes where placement puts
// an account in an empty deployment: the first shard by name.
const placed = wranglerSync(["d1", "execute", "DB", "--local", "--json", "--command", `SELECT shard FROM accounts WHERE id = '${DEMO_ACCOUNT}'`]);
run("reading the directory", placed);
const demoShard = JSON.parse(placed.stdout)[0]?.results?.[0]?.shard ?? shardNames()[0];
writeFileSync(".wrangler/demo-directory.sql", demoDirectorySql(vars, demoShard));
writeFileSync(".wrangler/demo-shard.sql", demoShardSql());
run("adding demo data", wrangler(["d1", "execute", `SHARD_${demoShard}`, "--local", "--file", ".wrangler/demo-shard.sql"], { stdio: "pipe" }));
run("adding demo data", wrangler(["d1", "execute", "DB", "--local", "--file", ".wrangler/demo-directory.sql"], { stdio: "pipe" }));
console.log(`Local D1 databases: migrations applied (.wrangler/state): the directory and shards ${shardNames().join(", ")}.`);

const base = `http://127.0.0.1:${PORT}`;
console.log(`
Demo data is ready (account ${DEMO_ACCOUNT}, on shard ${demoShard}).
  client:    demo-client    / ${vars.DEMO_CLIENT_PASSWORD}
  processor: demo-processor / ${vars.DEMO_PROCESSOR_PASSWORD}
  admin:     Authorization: Bearer ${vars.ADMIN_TOKEN}

Try:
  curl -u demo-client:${vars.DEMO_CLIENT_PASSWORD} ${base}/v2/payments/
  API docs: ${base}/docs
  Console:  ${base}/console/   (sign in as demo-client)
`);

/** wrangler's log level for LOG: `info` is `log` (the Worker's own lines); any other of wrangler's levels as it is. */
function logLevel(level = "warn") {
  return level === "info" ? "log" : level;
}

const dev = spawn(
  WRANGLER,
  // Quiet by default: warnings and errors only. LOG=info shows every request and the Worker's JSON
  // lines: wrangler prints a Worker's console.log at its `log` level, one below `info`.
  // PLATFORM_LIMITS: every invocation under Cloudflare's limits (src/dev/within-limits.ts), as in the tests.
  [
    "dev",
    "--ip",
    "127.0.0.1",
    "--port",
    PORT,
    "--test-scheduled",
    "--show-interactive-dev-session=false",
    "--log-level",
    logLevel(process.env.LOG),
    "--var",
    "PLATFORM_LIMITS:enforce",
  ],
  // The databases were migrated above: wrangler's build step (tools/dev/build.mjs) only builds the assets.
  { stdio: "inherit", env: { ...ENV, PAYMENTS_LOCAL_MIGRATED: "1" } },
);

// The local queue lives in memory: what it held when the service last stopped is gone. Once the
// service answers, one "@restart" sweep re-sends every due delivery still pending from before the
// service started (the rows say which), so nothing waits for the sweeper's 2-minute "lost"
// threshold; what the service handed over or leased since it started is its own.
(async () => {
  for (let tries = 0; tries < 240; tries++) {
    if (
      await fetch(`${base}/healthz`).then(
        (r) => r.ok,
        () => false,
      )
    ) {
      console.log(`Ready on ${base} (Ctrl-C stops it; LOG=info npm start logs every request).`);
      await fetch(`${base}/__scheduled?cron=%40restart`).catch(() => {});
      return;
    }
    await new Promise((done) => setTimeout(done, 500));
  }
})();

// wrangler dev does not fire cron triggers by itself; fire the sweeper once a minute, as production does.
const cron = setInterval(() => {
  fetch(`${base}/__scheduled?cron=*+*+*+*+*`).catch(() => {});
}, 60_000);

for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => {
    clearInterval(cron);
    dev.kill(signal);
  });
}
dev.on("exit", (code) => {
  clearInterval(cron);
  process.exit(code ?? 0);
});
