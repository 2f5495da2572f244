import type { D1Migration } from "cloudflare:test";
import type { Env as WorkerEnv } from "../src/env";

declare global {
  namespace Cloudflare {
    interface Env extends WorkerEnv {
      MIGRATIONS_DIRECTORY: D1Migration[];
      MIGRATIONS_SHARD: D1Migration[];
      PAYMENT_DETAIL_SQL: string;
      /** Second databases, for the read replica test double (test/helpers/replica-d1.ts): the directory's and a shard's. */
      REPLICA_DB: D1Database;
      REPLICA_SHARD: D1Database;
      /** The migrations the baselines replaced, and empty databases to build each way (test/db/baseline-migrations.test.ts). */
      PRE_BASELINE_DIRECTORY: D1Migration[];
      PRE_BASELINE_SHARD: D1Migration[];
      BASELINE_DB: D1Database;
      BASELINE_SHARD: D1Database;
      STEPPED_DB: D1Database;
      STEPPED_SHARD: D1Database;
      PAGING_ROWS?: string;
      REPLAY_DELIVERIES?: string;
      FUZZ_RUNS?: string;
      RATE_LIMIT_CONFIG: string;
    }
  }
}
