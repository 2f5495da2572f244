// The service under benchmark: `wrangler dev` on a persisted, seeded D1 state, with its debugger
// relay off (VSCODE_INSPECTOR_OPTIONS=1, which roughly doubles D1 and queue throughput), local
// URLs allowed and SERVER_TIMING on (each response says the D1 rows it read).
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statfsSync, statSync } from "node:fs";
import { join } from "node:path";
import { invocationFigures, OFFLINE_ENV, startWrangler, undoAtExit } from "../lib/service.mjs";

export const MODE = "wrangler dev, debugger relay off (VSCODE_INSPECTOR_OPTIONS=1), SERVER_TIMING on";
/** The environment every benchmarked `wrangler dev` runs with (the service and the baseline alike). */
export const SERVICE_ENV = { ...OFFLINE_ENV, VSCODE_INSPECTOR_OPTIONS: "1" };

/**
 * The state a run serves: a copy of the seeded state `dir` in memory (/dev/shm), removed when
 * the run ends, or `dir` itself where there is no room (or with `onDisk`). Local D1 commits
 * every call, reads included: it counts a development-only "bookmark" in the database
 * (workerd's `_cf_METADATA`, key 2, "not used in production"), and each commit waits for an
 * fsync on the thread that runs the Worker: on this machine's disk the payment detail ran at
 * about 0.77 of its rate in memory (`node tools/bench/probes/ab.mjs --base-state <copy in /dev/shm>`). In memory the fsync costs nothing, as on
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

/**
 * The service under benchmark (tools/lib/service.mjs's `wrangler dev` with the debugger relay off),
 * with its CPU time and memory watched. `vars` add to its settings; `scheduled` lets the caller
 * fire the cron at /__scheduled.
 */
export async function startService({ dir, port, vars = {}, scheduled = false }) {
  // At "warn": errors, and the development layer's one line per queue batch and cron run.
  const service = await startWrangler({ dir, port, vars, scheduled, env: { VSCODE_INSPECTOR_OPTIONS: "1" }, logLevel: "warn" });
  const memory = watchMemory(service.pid);
  return {
    base: service.base,
    pid: service.pid,
    /** SIGKILL to the whole process group: a crash, not a stop. */
    kill() {
      memory.stop();
      return service.kill();
    },
    peakRssBytes: () => memory.peak,
    /** Each queue batch's and cron run's figures against a Worker invocation's limits (src/dev/within-limits.ts), from its log. */
    invocations: () => invocationFigures(service.output()),
    /** CPU time (ms) the service's processes have used so far. */
    cpuMs: () => cpuMs(service.pid),
    /** RSS samples (bytes), every 500 ms since the service was up: is memory flat over the run? */
    rssSamples: () => memory.samples,
    stop() {
      memory.stop();
      return service.stop();
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
