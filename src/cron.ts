import { createDb } from "./db/client";
import { gatedD1 } from "./db/gated-d1";
import { boundShards } from "./db/shards";
import type { Env } from "./env";
import { forgetExpiredKeys } from "./idempotency";
import { forgetAuthFailures } from "./services/auth-throttle";
import { continueErasures } from "./services/erasure";
import { continueMoves } from "./services/moves";
import { foldBehindAccounts } from "./services/counts";
import { applyRetention, continueReleases, retentionDays, sweepOutbox } from "./webhooks";
import { eachAtMost } from "./lib/at-most";
import { D1_QUERIES_PER_INVOCATION, SIMULTANEOUS_CONNECTIONS } from "./lib/platform-limits";
import { RunBudget, type Allowance, type JobBudget } from "./lib/run-budget";

/**
 * One cron run: the directory's jobs (sign-in failures; erasures and moves, which reach into their
 * accounts' shards) and, on every shard, its outbox sweep, idempotency clean-up, retention, the
 * fold of payment counts (services/counts) and the release of what resumed subscriptions
 * still hold (webhooks/subscriptions/holds.ts). Every job is bounded and runs on its own,
 * JOBS_AT_ONCE at a time, within its part of the run's budget (lib/run-budget.ts): a slow or
 * failing shard holds back none of the others' work, and each job says in one log line what it
 * did, what it spent, and whether it left the rest to the next run.
 */
export async function runCron(env: Env, now: number, sweep: { restartedAt?: number } = {}): Promise<void> {
  const days = retentionDays(env.RETENTION_DAYS);
  // A job's name, its database, its weights in the run's budget, and its work.
  type Job = [string, string, Allowance, (env: Env, budget: JobBudget) => Promise<unknown>];
  const jobs: Job[] = [
    ["auth_failures", "directory", QUERIES, (env) => forgetAuthFailures(createDb(env.DB), now)],
    ["erasure", "directory", QUERIES, (env) => continueErasures(createDb(env.DB), env)],
    ["moves", "directory", { d1Queries: 2, queueMessages: 1 }, (env) => continueMoves(createDb(env.DB), env)],
  ];
  for (const shard of boundShards(env).keys()) {
    const db = (env: Env) => createDb(env[`SHARD_${shard}`]!);
    jobs.push(
      ["sweep", shard, { d1Queries: 2, queueMessages: 4 }, (env, budget) => sweepOutbox(db(env), { queue: env.DELIVERIES, shard }, now, { ...sweep, max: budget.allowed.queueMessages })],
      ["idempotency", shard, QUERIES, (env) => forgetExpiredKeys(db(env), now)],
      ["retention", shard, { d1Queries: 4, queueMessages: 0 }, (env) => applyRetention(db(env), env.ARCHIVE, days, now)],
      ["counts", shard, QUERIES, (env) => foldBehindAccounts(db(env))],
      ["releases", shard, { d1Queries: 1, queueMessages: 1 }, (env) => continueReleases(db(env), { queue: env.DELIVERIES, shard }, now)],
    );
  }
  const weights = jobs.reduce((sum, [, , weight]) => ({ d1Queries: sum.d1Queries + weight.d1Queries, queueMessages: sum.queueMessages + weight.queueMessages }), { d1Queries: 0, queueMessages: 0 });
  const run = new RunBudget(CRON_BUDGET, weights);
  await eachAtMost(jobs, JOBS_AT_ONCE, async ([job, shard, weight, work]) => {
    const budget = run.start(weight);
    let line: Record<string, unknown> = {};
    try {
      line = { result: (await work(withinBudget(env, budget), budget)) ?? null };
    } catch (error) {
      if (!budget.stopped) line = { error: String(error) };
    } finally {
      run.end(budget);
    }
    const left = budget.stopped ? "budget spent: the next run goes on" : null;
    const type = "error" in line ? "cron_error" : "cron_job";
    (type === "cron_error" ? console.error : console.log)(JSON.stringify({ type, job, shard, ...line, d1_queries: budget.spent.d1Queries, d1_calls: budget.d1Calls, queue_messages: budget.spent.queueMessages, left }));
  });
}

/**
 * What one cron run may spend, shared by its jobs: D1 queries within an invocation's 1,000 (the
 * rest a margin), and queue messages (the sweep's re-sends: a few seconds of a queue's 5,000 a
 * second, so a backlog after an outage drains over runs without crowding out new deliveries).
 */
export const CRON_BUDGET: Allowance = { d1Queries: D1_QUERIES_PER_INVOCATION - 100, queueMessages: 10_000 };
/** The weights of a job that only queries D1. */
const QUERIES: Allowance = { d1Queries: 1, queueMessages: 0 };

/** `env` whose D1 bindings and delivery queue spend from a job's budget. */
function withinBudget(env: Env, budget: JobBudget): Env {
  const gate = { call: <T>(sqls: string[], run: () => Promise<T>) => (budget.spend("d1Queries", sqls.length), (budget.d1Calls += 1), run()) };
  const queue = env.DELIVERIES;
  const deliveries = {
    send: (...args: Parameters<typeof queue.send>) => (budget.spend("queueMessages", 1), queue.send(...args)),
    sendBatch: (...args: Parameters<typeof queue.sendBatch>) => (budget.spend("queueMessages", [...args[0]].length), queue.sendBatch(...args)),
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
