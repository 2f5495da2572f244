// The one way the tools and the Node-side tests start the service, on a free port of 127.0.0.1:
// `npm start` as a newcomer runs it (in a fresh copy of the project), or `wrangler dev` on a given
// local state with the benchmark's settings. Whatever is started is stopped at exit, even early.
import { spawn } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { readDevVars, writeDevVars } from "./dev-vars.mjs";
import { stopGroup } from "./process-group.mjs";

export const ROOT = resolve(import.meta.dirname, "../..");
// public/ too (when built), so that the copy's wrangler finds its assets up to date rather than building them again.
const PROJECT_FILES = ["package.json", "wrangler.toml", "tsconfig.json", "src", "tools", "migrations", "console", "drizzle", "public"];
/** Offline and quiet: no Cloudflare requests, no metrics. */
export const OFFLINE_ENV = { CLOUDFLARE_CF_FETCH_ENABLED: "false", WRANGLER_SEND_METRICS: "false" };

const leftovers = new Set();
let hooked = false;
/** Runs `undo` at exit (a crash, Ctrl-C, SIGTERM) unless the returned function is called first. */
export function undoAtExit(undo) {
  if (!hooked) {
    hooked = true;
    process.once("exit", () => [...leftovers].reverse().forEach((each) => each()));
    for (const signal of ["SIGINT", "SIGTERM"]) process.once(signal, () => process.exit(130));
  }
  leftovers.add(undo);
  return () => leftovers.delete(undo);
}

export function freePort() {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once("error", fail);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => done(port));
    });
  });
}

/** A fresh copy of the project in a temporary folder (node_modules shared). */
export function freshCopy() {
  const dir = mkdtempSync(join(tmpdir(), "payments-copy-"));
  for (const name of PROJECT_FILES) if (existsSync(join(ROOT, name))) cpSync(join(ROOT, name), join(dir, name), { recursive: true });
  symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"), "dir");
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Starts `command` in its own process group; resolves once `port`'s /healthz answers. */
async function launch(command, args, { cwd, env, port, timeoutMs, what }) {
  const child = spawn(command, args, { cwd, env: { ...process.env, ...OFFLINE_ENV, ...env }, stdio: ["ignore", "pipe", "pipe"], detached: true });
  const forget = undoAtExit(() => {
    try {
      process.kill(-child.pid, "SIGKILL");
    } catch {}
  });
  let output = "";
  child.stdout.on("data", (chunk) => (output += chunk));
  child.stderr.on("data", (chunk) => (output += chunk));
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + timeoutMs;
  while (
    !(await fetch(`${base}/healthz`).then(
      (res) => res.ok,
      () => false,
    ))
  ) {
    if (child.exitCode !== null || Date.now() > deadline) {
      forget();
      await stopGroup(child);
      throw new Error(`${what} ${child.exitCode !== null ? `exited ${child.exitCode}` : `did not answer /healthz in ${timeoutMs / 1000} s`}:\n${output}`);
    }
    await new Promise((done) => setTimeout(done, 250));
  }
  return {
    base,
    pid: child.pid,
    output: () => output,
    async stop() {
      forget();
      await stopGroup(child);
    },
    /** SIGKILL to the whole process group: a crash, not a stop. */
    kill() {
      forget();
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {}
      return new Promise((done) => (child.exitCode !== null ? done() : child.once("exit", done)));
    },
  };
}

/** `npm start` (tools/dev/start.mjs) in `dir`, as a newcomer runs it; with the .dev.vars it made. */
export async function startNpmStart(dir, port) {
  const service = await launch(process.execPath, ["tools/dev/start.mjs"], {
    cwd: dir,
    env: { PORT: String(port) },
    port,
    timeoutMs: 180_000,
    what: "npm start",
  });
  return { ...service, vars: readDevVars(join(dir, ".dev.vars")) };
}

/** The settings `wrangler dev` gets from the benchmark and the soak. */
export const BENCH_VARS = {
  ENCRYPTION_KEY: "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=",
  ADMIN_TOKEN: "bench-admin-token",
  ALLOW_LOCAL_WEBHOOK_URLS: "true",
  SERVER_TIMING: "true",
  // Every invocation under Cloudflare's limits, as in the tests (src/dev/within-limits.ts).
  PLATFORM_LIMITS: "enforce",
  // The load generator is one API user far over the per-user rate limit: lift it here only.
  RATE_LIMITING: "off",
};

/**
 * `wrangler dev` on the local state in `dir` (its D1 files), with BENCH_VARS and `vars`, logging
 * errors only (or at `logLevel`: "log" keeps the Worker's own log lines in `output()`); `scheduled`
 * lets the caller fire the cron at /__scheduled; `env` adds to its environment (the benchmark turns
 * the debugger relay off with it).
 */
export async function startWrangler({ dir, port, vars = {}, scheduled = false, env = {}, logLevel = "error" }) {
  const envFile = resolve(dir, "bench.env");
  writeDevVars(envFile, { ...BENCH_VARS, ...vars });
  const args = [
    "dev",
    "--ip",
    "127.0.0.1",
    "--port",
    String(port),
    "--persist-to",
    dir,
    "--env-file",
    envFile,
    "--show-interactive-dev-session=false",
    "--log-level",
    logLevel,
  ];
  if (scheduled) args.push("--test-scheduled");
  // Its databases are in `dir`, migrated by the caller: wrangler's build step leaves the local ones alone.
  return launch(join(ROOT, "node_modules/.bin/wrangler"), args, {
    cwd: ROOT,
    env: { PAYMENTS_LOCAL_MIGRATED: "1", ...env },
    port,
    timeoutMs: 120_000,
    what: "wrangler dev",
  });
}

/** Runs a command to its end; resolves with its exit code and output. */
export function run(command, args, options = {}) {
  return new Promise((done) => {
    const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"], ...options });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    child.on("exit", (code) => done({ code, stdout, stderr }));
  });
}

/** The development layer's (src/dev/within-limits.ts) `invocation_limits` lines in `output`, by handler: how many, and the most of each figure. Pure. */
export function invocationFigures(output) {
  const byHandler = {};
  for (const match of output.matchAll(/\{"type":"invocation_limits"[^\n]*?\}/g)) {
    let line;
    try {
      line = JSON.parse(match[0]);
    } catch {
      continue;
    }
    const { type: _type, handler, messages, ...figures } = line;
    const seen = (byHandler[handler] ??= { invocations: 0, totalD1Calls: 0, totalMessages: 0, totals: {} });
    seen.invocations += 1;
    seen.totalD1Calls += figures.d1Calls ?? 0;
    seen.totalMessages += messages ?? 0;
    // Sums over the invocations (for a cost per delivery): D1 queries, and with SERVER_TIMING rows and SQL time.
    for (const name of ["d1Queries", "d1RowsRead", "d1RowsWritten", "d1SqlMs", "d1Statements"])
      if (typeof figures[name] === "number") seen.totals[name] = (seen.totals[name] ?? 0) + figures[name];
    for (const [name, value] of Object.entries(figures)) seen[name] = Math.max(seen[name] ?? 0, value);
  }
  // A queue batch's round trips per message (a delivery), over every batch.
  for (const seen of Object.values(byHandler))
    seen.d1CallsPerMessage = seen.totalMessages ? Math.round((seen.totalD1Calls / seen.totalMessages) * 100) / 100 : null;
  return byHandler;
}
