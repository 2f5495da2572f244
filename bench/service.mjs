// The service under benchmark: `wrangler dev` on a persisted, seeded D1 state, with its debugger
// relay off (VSCODE_INSPECTOR_OPTIONS=1, which roughly doubles D1 and queue throughput), local
// URLs allowed and SERVER_TIMING on (each response says the D1 rows it read).
import { spawn } from "node:child_process";
import { stopGroup } from "../scripts/process-group.mjs";
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statfsSync, statSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";

export const MODE = "wrangler dev, debugger relay off (VSCODE_INSPECTOR_OPTIONS=1), SERVER_TIMING on";
/** The environment every benchmarked `wrangler dev` runs with (the service and the baseline alike). */
export const SERVICE_ENV = { CLOUDFLARE_CF_FETCH_ENABLED: "false", WRANGLER_SEND_METRICS: "false", VSCODE_INSPECTOR_OPTIONS: "1" };

/**
 * What a benchmark script must not leave behind if it ends early (a scenario throws, Ctrl-C, a
 * SIGTERM): the process groups of the services it started and the state copies it made, undone
 * at exit, newest first. An entry is dropped when its owner undoes it first (stop, kill, remove).
 */
const leftovers = new Set();
let hooked = false;
function undoAtExit(undo) {
  if (!hooked) {
    hooked = true;
    process.once("exit", () => [...leftovers].reverse().forEach((each) => each()));
    for (const signal of ["SIGINT", "SIGTERM"]) process.once(signal, () => process.exit(130));
  }
  leftovers.add(undo);
  return () => leftovers.delete(undo);
}

/**
 * The state a run serves: a copy of the seeded state `dir` in memory (/dev/shm), removed when
 * the run ends, or `dir` itself where there is no room (or with `onDisk`). Local D1 commits
 * every call, reads included: it counts a development-only "bookmark" in the database
 * (workerd's `_cf_METADATA`, key 2, "not used in production"), and each commit waits for an
 * fsync on the thread that runs the Worker. On this machine's disk that took about a fifth of
 * the service's rate (`node bench/ab.mjs --base-state <copy in /dev/shm>`, 2026-11-24: the
 * payment detail 206 req/s on disk, 267 in memory). In memory the fsync costs nothing, as on
 * Cloudflare, where it is not on the Worker's thread at all. A run's writes stay in its copy,
 * so a reused state does not wear out from run to run.
 */
export function runState(dir, { onDisk = false } = {}) {
  const onTheDisk = { dir, where: `state on disk (${dir})`, remove() {} };
  if (onDisk) return onTheDisk;
  const size = readdirSync(dir, { recursive: true }).reduce((sum, name) => {
    const stat = statSync(join(dir, name));
    return sum + (stat.isFile() ? stat.size : 0);
  }, 0);
  const free = existsSync("/dev/shm") ? (({ bavail, bsize }) => bavail * bsize)(statfsSync("/dev/shm")) : 0;
  if (free < 2 * size) return onTheDisk;
  const copy = mkdtempSync("/dev/shm/payments-bench-");
  const remove = () => rmSync(copy, { recursive: true, force: true });
  const done = undoAtExit(remove);
  cpSync(dir, copy, { recursive: true });
  return { dir: copy, where: "state copied into memory (/dev/shm) for the run", remove: () => (done(), remove()) };
}

/** `vars` add to the service's settings; `scheduled` lets the caller fire the cron at /__scheduled. */
export async function startService({ dir, port, vars = {}, scheduled = false }) {
  const envFile = resolve(dir, "bench.env");
  writeFileSync(
    envFile,
    [
      'ENCRYPTION_KEY="AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="',
      'ADMIN_TOKEN="bench-admin-token"',
      'ALLOW_LOCAL_WEBHOOK_URLS="true"',
      'SERVER_TIMING="true"',
      // The load generator is one API user far over the per-user rate limit: lift it here only.
      'RATE_LIMITING="off"',
      ...Object.entries(vars).map(([name, value]) => `${name}=${JSON.stringify(String(value))}`),
      "",
    ].join("\n"),
  );
  const child = spawn(
    "node_modules/.bin/wrangler",
    ["dev", "--ip", "127.0.0.1", "--port", String(port), "--persist-to", dir, "--env-file", envFile, "--show-interactive-dev-session=false", "--log-level", "error", ...(scheduled ? ["--test-scheduled"] : [])],
    {
      env: { ...process.env, ...SERVICE_ENV },
      stdio: ["ignore", "ignore", "pipe"],
      detached: true,
    },
  );
  const forget = undoAtExit(() => {
    try {
      process.kill(-child.pid, "SIGKILL");
    } catch {}
  });
  let stderr = "";
  child.stderr.on("data", (chunk) => (stderr += chunk));
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 120_000;
  while (!(await fetch(`${base}/healthz`).then((r) => r.ok, () => false))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      forget();
      stopGroup(child);
      throw new Error(`the service did not start:\n${stderr}`);
    }
    await new Promise((done) => setTimeout(done, 250));
  }
  const memory = watchMemory(child.pid);
  return {
    base,
    pid: child.pid,
    /** SIGKILL to the whole process group: a crash, not a stop. */
    kill() {
      forget();
      memory.stop();
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {}
      return new Promise((done) => (child.exitCode !== null ? done() : child.once("exit", done)));
    },
    peakRssBytes: () => memory.peak,
    /** CPU time (ms) the service's processes have used so far. */
    cpuMs: () => cpuMs(child.pid),
    /** RSS samples (bytes), every 500 ms since the service was up: is memory flat over the run? */
    rssSamples: () => memory.samples,
    async stop() {
      forget();
      memory.stop();
      await stopGroup(child);
    },
  };
}


/** A process and its descendants (wrangler, workerd), from /proc. */
function processTree(pid) {
  let children = [];
  try {
    children = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {} // gone meanwhile
  return [pid, ...children.flatMap(processTree)];
}

/** The CPU time (ms, user and system) a process and its descendants have used so far. */
function cpuMs(rootPid) {
  let ticks = 0;
  for (const pid of processTree(rootPid)) {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
      ticks += Number(fields[11]) + Number(fields[12]); // utime, stime
    } catch {} // gone meanwhile
  }
  return ticks * 10; // USER_HZ is 100
}

/** The resident memory of a process and its descendants (wrangler, workerd), sampled every 500 ms. */
function watchMemory(rootPid) {
  const state = { peak: 0, samples: [] };
  const rss = (pid) => {
    try {
      const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
      return match ? Number(match[1]) * 1024 : 0;
    } catch {
      return 0;
    }
  };
  const timer = setInterval(() => {
    const total = processTree(rootPid).reduce((sum, pid) => sum + rss(pid), 0);
    state.peak = Math.max(state.peak, total);
    state.samples.push(total);
  }, 500);
  return {
    get peak() {
      return state.peak;
    },
    get samples() {
      return state.samples;
    },
    stop: () => clearInterval(timer),
  };
}

