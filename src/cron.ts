import { createDb } from "./db/client";
import { boundShards } from "./db/shards";
import type { Env } from "./env";
import { forgetExpiredKeys } from "./idempotency";
import { forgetAuthFailures } from "./services/auth-throttle";
import { continueErasures } from "./services/erasure";
import { continueMoves } from "./services/moves";
import { foldBehindAccounts } from "./services/payment-counts";
import { applyRetention, retentionDays, sweepOutbox } from "./webhooks";

/**
 * One cron run: the directory's jobs (sign-in failures; erasures and moves, which reach into their
 * accounts' shards) and, on every shard, its outbox sweep, idempotency clean-up, retention and the
 * fold of payment counts (services/payment-counts). Every job is bounded and runs on its own: a
 * slow or failing shard holds back none of the others' work, and a failure is one log line naming
 * the job and the shard.
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
  await Promise.all(
    jobs.map(([job, shard, run]) => run().catch((error) => console.error(JSON.stringify({ type: "cron_error", job, shard, error: String(error) })))),
  );
}
