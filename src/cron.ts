import { createDb } from "./db/client";
import { boundShards } from "./db/shards";
import type { Env } from "./env";
import { forgetExpiredKeys } from "./idempotency";
import { forgetAuthFailures } from "./services/auth-throttle";
import { continueErasures } from "./services/erasure";
import { continueMoves } from "./services/moves";
import { foldBehindAccounts } from "./services/payment-counts";
import { applyRetention, retentionDays, sweepOutbox } from "./webhooks";
import { eachAtMost } from "./lib/at-most";
import { SIMULTANEOUS_CONNECTIONS } from "./lib/platform-limits";

/**
 * One cron run: the directory's jobs (sign-in failures; erasures and moves, which reach into their
 * accounts' shards) and, on every shard, its outbox sweep, idempotency clean-up, retention and the
 * fold of payment counts (services/payment-counts). Every job is bounded and runs on its own,
 * JOBS_AT_ONCE at a time: a slow or failing shard holds back none of the others' work, and a
 * failure is one log line naming the job and the shard.
 */
export async function runCron(env: Env, now: number, sweep: { restartedAt?: number } = {}): Promise<void> {
  const directory = createDb(env.DB);
  const days = retentionDays(env.RETENTION_DAYS);
  const jobs: [string, string, () => Promise<unknown>][] = [
    ["auth_failures", "directory", () => forgetAuthFailures(directory, now)],
    ["erasure", "directory", () => continueErasures(directory, env)],
    ["moves", "directory", () => continueMoves(directory, env)],
  ];
  for (const [shard, binding] of boundShards(env)) {
    const db = createDb(binding);
    jobs.push(
      ["sweep", shard, () => sweepOutbox(db, { queue: env.DELIVERIES, shard }, now, sweep)],
      ["idempotency", shard, () => forgetExpiredKeys(db, now)],
      ["retention", shard, () => applyRetention(db, env.ARCHIVE, days, now)],
      ["counts", shard, () => foldBehindAccounts(db)],
    );
  }
  await eachAtMost(jobs, JOBS_AT_ONCE, ([job, shard, run]) =>
    run().then(
      () => undefined,
      (error) => console.error(JSON.stringify({ type: "cron_error", job, shard, error: String(error) })),
    ),
  );
}

/**
 * Jobs under way at once. A job has one D1 call in flight at a time, two at most (a move's check
 * reads both shards), so three keep the run within a Worker's simultaneous connections
 * (lib/platform-limits.ts); a slow job holds one place and the others go on in the rest.
 */
export const JOBS_AT_ONCE = Math.floor(SIMULTANEOUS_CONNECTIONS / 2);
