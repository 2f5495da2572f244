import { createDb } from "./db/client";
import { gatedD1 } from "./db/gated-d1";
import { boundShards } from "./db/shards";
import type { Env } from "./env";
import { forgetExpiredKeys } from "./idempotency";
import { forgetAuthFailures } from "./services/auth-throttle";
import { continueErasures, ERASURE_STEP } from "./services/erasure";
import { continueMoves, MOVE_STEP } from "./services/moves";
import { foldBehindAccounts } from "./services/counts";
import {
  applyRetention,
  CHALLENGE_QUERIES,
  continueChallenges,
  continueReleases,
  resumeStalledReplays,
  RETENTION_STEP,
  retentionDays,
  settleLagging,
  sweepOutbox,
} from "./webhooks";
import { eachAtMost } from "./lib/at-most";
import { D1_QUERIES_PER_INVOCATION, SIMULTANEOUS_CONNECTIONS } from "./lib/platform-limits";
import { inTurn, isBudgetSpent, JobBudget, RunBudget, type Allowance, type JobWeight } from "./lib/run-budget";

/**
 * One cron run: the directory's jobs (sign-in failures; erasures and moves, which reach into their
 * accounts' shards) and, on every shard its trigger tends (CRON_SHARDS: by default all), its outbox sweep,
 * idempotency clean-up, retention, the fold of payment counts (services/counts) and the release of
 * what resumed subscriptions still hold (webhooks/subscriptions/holds.ts), and the endpoint-ownership
 * challenges due (webhooks/delivery/challenge.ts). Every job is bounded
 * and runs on its own, JOBS_AT_ONCE at a time, within its part of the run's budget
 * (lib/run-budget.ts: shares, floors and turns, bookkeeping outside the budget): a slow or failing
 * shard holds back none of the others' work, and each job says in one log line what it did, what
 * it spent, and whether it left the rest to the next run.
 */
export async function runCron(env: Env, now: number, sweep: { restartedAt?: number } = {}, cron?: string): Promise<void> {
  const jobs = inTurn(cronJobs(env, now, sweep, cron), Math.floor(now / RUN_EVERY_MS));
  const weights = jobs.reduce((sum, { weight }) => ({ d1Queries: sum.d1Queries + weight.d1Queries, queueMessages: sum.queueMessages + weight.queueMessages }), {
    d1Queries: 0,
    queueMessages: 0,
  });
  const run = new RunBudget(CRON_BUDGET, weights);
  await eachAtMost(jobs, JOBS_AT_ONCE, async (job) => {
    const budget = run.start(job.weight);
    if (!budget) {
      console.log(
        JSON.stringify({
          type: "cron_job",
          job: job.job,
          shard: job.shard,
          result: null,
          d1_queries: 0,
          left: "waits its turn: the run's budget left less than its floor",
        }),
      );
      return;
    }
    try {
      await runJob(job, env, budget);
    } finally {
      run.end(budget);
    }
  });
}

/** One job under `budget`: its log line (also printed). */
export async function runJob(job: CronJob, env: Env, budget: JobBudget): Promise<Record<string, unknown>> {
  let outcome: Record<string, unknown> = {};
  try {
    outcome = { result: (await job.work({ env: withinBudget(env, budget, "work"), bookkeeping: withinBudget(env, budget, "bookkeeping"), budget })) ?? null };
  } catch (error) {
    if (!isBudgetSpent(error)) outcome = { error: String(error) };
  }
  if (budget.overdrawn) outcome = { ...outcome, error: `its bookkeeping passed its part (reserve ${budget.reserve})` };
  const left = budget.stopped ? "budget spent: the next run goes on" : null;
  const type = "error" in outcome ? "cron_error" : "cron_job";
  const line = {
    type,
    job: job.job,
    shard: job.shard,
    ...outcome,
    d1_queries: budget.spent.d1Queries,
    d1_calls: budget.d1Calls,
    queue_messages: budget.spent.queueMessages,
    left,
  };
  (type === "cron_error" ? console.error : console.log)(JSON.stringify(line));
  return line;
}

/** What a job is given: `env` whose calls spend from its budget, and `bookkeeping`, the same bindings counted but never refused. */
export interface JobContext {
  env: Env;
  bookkeeping: Env;
  budget: JobBudget;
}

export interface CronJob {
  job: string;
  /** The database it works on: "directory" or a shard's name. */
  shard: string;
  weight: JobWeight;
  work: (ctx: JobContext) => Promise<unknown>;
}

/** The jobs of a run of trigger `cron` (every job when none is given), in their standing order. */
export function cronJobs(env: Env, now: number, sweep: { restartedAt?: number } = {}, cron?: string): CronJob[] {
  const days = retentionDays(env.RETENTION_DAYS);
  const tends = tendedBy(env, cron);
  const directoryJobs: CronJob[] = [
    { job: "auth_failures", shard: "directory", weight: ONE_QUERY, work: ({ env }) => forgetAuthFailures(createDb(env.DB), now) },
    {
      job: "erasure",
      shard: "directory",
      weight: { d1Queries: 1, queueMessages: 0, ...ERASURE_STEP },
      work: ({ env }) => continueErasures(createDb(env.DB), env),
    },
    {
      job: "moves",
      shard: "directory",
      weight: { d1Queries: 2, queueMessages: 0, ...MOVE_STEP },
      work: ({ env, bookkeeping, budget }) => continueMoves(createDb(env.DB), env, { bookkeeping, room: () => budget.left("d1Queries") }),
    },
  ];
  const jobs = tends.directory ? directoryJobs : [];
  for (const shard of tends.shards) {
    const db = (env: Env) => createDb(env[`SHARD_${shard}`]!);
    const queue = (env: Env) => ({ queue: env.DELIVERIES, shard });
    jobs.push(
      {
        job: "sweep",
        shard,
        weight: { d1Queries: 2, queueMessages: 4, floor: 4, reserve: 0 },
        work: ({ env, budget }) => sweepOutbox(db(env), queue(env), now, { ...sweep, max: budget.allowed.queueMessages }),
      },
      { job: "idempotency", shard, weight: ONE_QUERY, work: ({ env }) => forgetExpiredKeys(db(env), now) },
      {
        job: "retention",
        shard,
        weight: { d1Queries: 4, queueMessages: 0, ...RETENTION_STEP },
        work: ({ env, bookkeeping }) => applyRetention(db(env), env.ARCHIVE, days, now, { bookkeeping: db(bookkeeping) }),
      },
      { job: "counts", shard, weight: { d1Queries: 1, queueMessages: 0, floor: 8, reserve: 0 }, work: ({ env }) => foldBehindAccounts(db(env)) },
      {
        job: "releases",
        shard,
        weight: { d1Queries: 1, queueMessages: 1, floor: 4, reserve: 0 },
        work: ({ env }) => continueReleases(db(env), queue(env), now),
      },
      {
        // One lagging subscription's step: the read, its state's update and its event.
        job: "lag",
        shard,
        weight: { d1Queries: 1, queueMessages: 1, floor: 3, reserve: 0 },
        work: ({ env, budget }) => settleLagging(db(env), queue(env), now, budget.left("d1Queries")),
      },
      {
        // The endpoint-ownership challenges due: their read, and each one's take and record.
        job: "challenges",
        shard,
        weight: { d1Queries: 1, queueMessages: 1, floor: 1 + CHALLENGE_QUERIES, reserve: 0 },
        work: ({ env, budget }) =>
          continueChallenges(
            db(env),
            queue(env),
            { encryptionKey: env.ENCRYPTION_KEY, allowLocalUrls: env.ALLOW_LOCAL_WEBHOOK_URLS === "true" },
            now,
            budget.left("d1Queries"),
          ),
      },
      {
        // The running replays whose step message was lost: one read, a message each (RESUMED_AT_ONCE at most).
        job: "replays",
        shard,
        weight: { d1Queries: 1, queueMessages: 1, floor: 1, reserve: 0 },
        work: ({ env }) => resumeStalledReplays(db(env), queue(env), now),
      },
    );
  }
  return jobs;
}

/**
 * What a run of trigger `cron` tends (CRON_SHARDS): a trigger CRON_SHARDS names, the shards it
 * lists; any other, the directory and every bound shard no trigger is named for; "@restart" (the
 * local service's restart) and a run with no trigger, everything. A CRON_SHARDS that does not
 * parse is a config_error line, and every trigger tends everything.
 */
export function tendedBy(env: Env, cron?: string): { directory: boolean; shards: string[] } {
  const bound = [...boundShards(env).keys()];
  const groups = cronGroups(env.CRON_SHARDS);
  if (cron === undefined || cron === "@restart" || groups.size === 0) return { directory: true, shards: bound };
  const mine = groups.get(cron);
  if (mine) return { directory: false, shards: bound.filter((shard) => mine.includes(shard)) };
  const elsewhere = new Set([...groups.values()].flat());
  return { directory: true, shards: bound.filter((shard) => !elsewhere.has(shard)) };
}

/** Every shard some trigger tends: the shards of a run with no trigger. */
export const tendedShards = (env: Env) => tendedBy(env).shards;

/** CRON_SHARDS as trigger → shard names; empty when unset or malformed (said once in the log). */
function cronGroups(text: string | undefined): Map<string, string[]> {
  if (!text?.trim()) return new Map();
  try {
    const parsed: unknown = JSON.parse(text);
    if (!parsed || typeof parsed !== "object" || Array.isArray(parsed) || !Object.values(parsed).every((value) => typeof value === "string"))
      throw new Error("not an object of strings");
    return new Map(
      Object.entries(parsed as Record<string, string>).map(([cron, names]) => [
        cron,
        names
          .split(",")
          .map((name) => name.trim())
          .filter(Boolean),
      ]),
    );
  } catch (error) {
    console.error(JSON.stringify({ type: "config_error", setting: "CRON_SHARDS", error: `expected {"<cron>": "A,B", …}: ${String(error)}` }));
    return new Map();
  }
}

/**
 * What one cron run may spend, shared by its jobs: D1 queries within an invocation's 1,000 (the
 * rest a margin: the run spends nothing outside its jobs, whose bookkeeping is their reserves,
 * counted here), and queue messages (the sweep's re-sends: a few seconds of a queue's 5,000 a
 * second, so a backlog after an outage drains over runs without crowding out new deliveries).
 */
export const CRON_BUDGET: Allowance = { d1Queries: D1_QUERIES_PER_INVOCATION - 50, queueMessages: 10_000 };
/** wrangler.toml's cron: a run a minute (the turns count runs by it). */
const RUN_EVERY_MS = 60_000;
/** A job that makes one query and needs no more. */
const ONE_QUERY: JobWeight = { d1Queries: 1, queueMessages: 0, floor: 1, reserve: 0 };

/** `env` whose D1 bindings and delivery queue spend from a job's budget: as work, or as bookkeeping (counted, never refused). */
function withinBudget(env: Env, budget: JobBudget, as: "work" | "bookkeeping"): Env {
  const spend = (kind: keyof Allowance, n: number) => (as === "work" ? budget.spend(kind, n) : budget.keep(kind, n));
  const gate = { call: <T>(sqls: string[], run: () => Promise<T>) => (spend("d1Queries", sqls.length), (budget.d1Calls += 1), run()) };
  const queue = env.DELIVERIES;
  const deliveries = {
    send: (...args: Parameters<typeof queue.send>) => (spend("queueMessages", 1), queue.send(...args)),
    sendBatch: (...args: Parameters<typeof queue.sendBatch>) => (spend("queueMessages", [...args[0]].length), queue.sendBatch(...args)),
  } as typeof queue;
  return new Proxy(env, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver);
      if (key === "DELIVERIES") return deliveries;
      if (typeof key === "string" && (key === "DB" || key.startsWith("SHARD_")) && value) return gatedD1(value as D1Database, gate);
      return value;
    },
  });
}

/**
 * Jobs under way at once. A job has one D1 call in flight at a time, two at most (a move's check
 * reads both shards), so three keep the run within a Worker's simultaneous connections
 * (lib/platform-limits.ts); a slow job holds one place and the others go on in the rest.
 */
export const JOBS_AT_ONCE = Math.floor(SIMULTANEOUS_CONNECTIONS / 2);
