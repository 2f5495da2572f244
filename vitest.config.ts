import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-pool-workers";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { resolve } from "node:path";
import type { Plugin } from "vite";
import { experimental_readRawConfig } from "wrangler";
import { defineConfig } from "vitest/config";

const { rawConfig } = experimental_readRawConfig({ config: "./wrangler.toml" });

/**
 * wrangler.toml as the test Worker's configuration, in a folder of its own. Wrangler reads
 * `.dev.vars` from beside the configuration it is given; the tests get their bindings below,
 * never a developer's local secrets from `npm start`.
 */
function testWranglerConfig(): string {
  // `npm test` builds the assets before the pool starts; the pool never runs [build] again.
  const { build: _build, ...withoutBuild } = rawConfig;
  const config = {
    ...withoutBuild,
    main: resolve(rawConfig.main!),
    assets: rawConfig.assets && { ...rawConfig.assets, directory: resolve(rawConfig.assets.directory!) },
    d1_databases: rawConfig.d1_databases?.map((db: { migrations_dir?: string }) => ({
      ...db,
      migrations_dir: db.migrations_dir && resolve(db.migrations_dir),
    })),
  };
  const path = resolve(".wrangler/vitest/wrangler.json");
  mkdirSync(resolve(".wrangler/vitest"), { recursive: true });
  writeFileSync(path, JSON.stringify(config, null, 2));
  return path;
}

/** standardwebhooks ships a source map whose sources it does not publish; load it without the map. */
function withoutBrokenSourceMap(): Plugin {
  return {
    name: "standardwebhooks-without-source-map",
    load(id) {
      if (!/node_modules\/standardwebhooks\/dist\/.*\.js$/.test(id)) return null;
      return readFileSync(id, "utf8").replace(/^\/\/# sourceMappingURL=.*$/m, "");
    },
  };
}

export default defineConfig(async () => {
  const [directoryMigrations, shardMigrations, directorySteps, shardSteps] = await Promise.all([
    readD1Migrations("./migrations/directory"),
    readD1Migrations("./migrations/shard"),
    // The steps the baselines replaced (test/db/baseline-migrations.test.ts).
    readD1Migrations("./test/fixtures/pre-baseline-migrations/directory"),
    readD1Migrations("./test/fixtures/pre-baseline-migrations/shard"),
  ]);
  return {
    plugins: [
      withoutBrokenSourceMap(),
      cloudflareTest({
        main: "./src/index.ts",
        wrangler: { configPath: testWranglerConfig() },
        miniflare: {
          // The read replicas of test/helpers/replica-d1.ts (there are no replicas locally): the
          // directory's and a shard's; and empty databases that test/db/baseline-migrations.test.ts builds.
          d1Databases: ["REPLICA_DB", "REPLICA_SHARD", "BASELINE_DB", "BASELINE_SHARD", "STEPPED_DB", "STEPPED_SHARD"],
          bindings: {
            MIGRATIONS_DIRECTORY: directoryMigrations,
            MIGRATIONS_SHARD: shardMigrations,
            PRE_BASELINE_DIRECTORY: directorySteps,
            PRE_BASELINE_SHARD: shardSteps,
            // What the seeds run to store each payment's detail (test/seed-sql.test.ts checks it against the API).
            PAYMENT_DETAIL_SQL: readFileSync("./tools/lib/payment-detail.sql", "utf8"),
            ADMIN_TOKEN: "test-admin-token",
            // wrangler.toml's rate limits, which test/rate-limit.test.ts checks (the binding's clock is not the test's).
            RATE_LIMIT_CONFIG: JSON.stringify(rawConfig.ratelimits ?? []),
            ENCRYPTION_KEY: "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=",
            // Deliveries go to a receiver on 127.0.0.1; policy tests turn this off per request.
            ALLOW_LOCAL_WEBHOOK_URLS: "true",
            // Every invocation under Cloudflare's limits (src/dev/within-limits.ts).
            PLATFORM_LIMITS: "enforce",
            // Size of the deep-paging test; the figure uses 200000.
            PAGING_ROWS: process.env.PAGING_ROWS ?? "20000",
            // Size of the replay test's window; the figure uses 30000.
            REPLAY_DELIVERIES: process.env.REPLAY_DELIVERIES ?? "3000",
            // Cases of the fuzz test (test/fuzz.test.ts); a long run sets 10000.
            FUZZ_RUNS: process.env.FUZZ_RUNS ?? "300",
          },
        },
      }),
    ],
    test: {
      include: ["test/**/*.test.ts"],
      setupFiles: ["./test/helpers/apply-migrations.ts"],
      globalSetup: ["./test/helpers/global-receiver.ts"],
      // A failing test shows what failed and what it printed, never the Worker's log (a JSON line
      // per request and delivery, thousands a file), which would bury it.
      silent: "passed-only" as const,
      onConsoleLog: (log: string) => !log.trimStart().startsWith('{"type":'),
      // A loaded 2-core machine runs a step many times slower than an idle one: no test is judged
      // by its speed (waitFor gives up after 90 s, a test after 120 s).
      testTimeout: 120_000,
      hookTimeout: 120_000,
      // The files wait on the runtime (queues, receivers, D1) far more than they compute: two at a
      // time on a 2-core machine, where vitest's default (a core less than the machine has) runs one.
      maxWorkers: Math.max(2, availableParallelism() - 1),
    },
  };
});
