import type { D1Migration } from "cloudflare:test";
import type { Env as WorkerEnv } from "../src/env";

declare global {
  namespace Cloudflare {
    interface Env extends WorkerEnv {
      TEST_MIGRATIONS: D1Migration[];
      /** A second database, for the read replica test double (test/helpers/replica-d1.ts). */
      REPLICA: D1Database;
      PAGING_ROWS?: string;
      FUZZ_RUNS?: string;
    }
  }
}
