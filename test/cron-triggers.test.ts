import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { CRON_BUDGET, cronJobs, tendedBy } from "../src/cron";
import { cronRun, recordingQueue } from "./helpers/cron";
import { migrateReplicas } from "./helpers/replicas";

await migrateReplicas();

// Which cron trigger tends which shards (CRON_SHARDS, docs/operations.md, "The cron"): more
// triggers, each its own invocation and budget, keep the cron's pace for more shards.
const three = { ...env, SHARD_C: env.REPLICA_SHARD };

describe("the cron's triggers", () => {
  it.each([
    ["no CRON_SHARDS: one trigger tends all", undefined, "* * * * *", { directory: true, shards: ["A", "B", "C"] }],
    ["a trigger it names: those shards alone", '{"*/1 * * * *": "C"}', "*/1 * * * *", { directory: false, shards: ["C"] }],
    ["another trigger: the directory and the shards no trigger is named for", '{"*/1 * * * *": "C"}', "* * * * *", { directory: true, shards: ["A", "B"] }],
    ["a named shard that is not bound is passed over", '{"*/1 * * * *": "C, Z"}', "*/1 * * * *", { directory: false, shards: ["C"] }],
    ["the local restart: everything", '{"*/1 * * * *": "C"}', "@restart", { directory: true, shards: ["A", "B", "C"] }],
    ["a run with no trigger: everything", '{"*/1 * * * *": "C"}', undefined, { directory: true, shards: ["A", "B", "C"] }],
    ["a CRON_SHARDS that does not parse: everything", '{"*/1 * * * *": ["C"]}', "*/1 * * * *", { directory: true, shards: ["A", "B", "C"] }],
  ])("%s", (_name, setting, cron, tends) => {
    expect(tendedBy({ ...three, CRON_SHARDS: setting }, cron)).toEqual(tends);
  });

  it("runs each trigger's jobs and no others", async () => {
    const bindings = { CRON_SHARDS: '{"*/1 * * * *": "B"}', DELIVERIES: recordingQueue([]) };
    const jobs = (lines: Record<string, any>[]) =>
      lines
        .filter((line) => line.type === "cron_job")
        .map((line) => `${line.job}@${line.shard}`)
        .sort();
    expect(jobs(await cronRun(bindings, { cron: "* * * * *" }))).toEqual(
      [
        "auth_failures@directory",
        "challenges@A",
        "counts@A",
        "erasure@directory",
        "idempotency@A",
        "lag@A",
        "moves@directory",
        "releases@A",
        "replays@A",
        "retention@A",
        "sweep@A",
      ].sort(),
    );
    expect(jobs(await cronRun(bindings, { cron: "*/1 * * * *" }))).toEqual(
      ["challenges@B", "counts@B", "idempotency@B", "lag@B", "releases@B", "replays@B", "retention@B", "sweep@B"].sort(),
    );
  });

  it("gives every job its floor in every run with the shards wrangler.toml binds, an account moving or not", () => {
    const least = cronJobs(env, Date.now()).reduce((sum, job) => sum + job.weight.floor + job.weight.reserve, 0);
    expect(least).toBeLessThanOrEqual(CRON_BUDGET.d1Queries);
  });
});
