import type { Db } from "./db/client";
import type { RequestSession } from "./db/session";
import type { D1Tally } from "./dev/counting-d1";
import type { Claim } from "./idempotency";
import type { Caller } from "./lib/caller";

/** The Worker's bindings, as declared in wrangler.toml and its secrets. */
export interface Env {
  /** The directory: accounts, API users and which shard holds each account. */
  DB: D1Database;
  /** The shards (db/shards.ts): every account's own data lives in exactly one. */
  [shard: `SHARD_${string}`]: D1Database | undefined;
  DELIVERIES: Queue<import("./webhooks/outbox/message").DeliveryMessage>;
  /** Cloudflare's rate limiting binding (wrangler.toml `[[ratelimits]]`), keyed by API user. */
  API_RATE_LIMIT?: RateLimit;
  /** "off" lifts the per-user rate limit: for local benchmarks only, never set in the deployed configuration. */
  RATE_LIMITING?: string;
  ADMIN_TOKEN?: string;
  ENCRYPTION_KEY?: string;
  ALLOW_LOCAL_WEBHOOK_URLS?: string;
  /** The soak's retry clock and queue faults: only with ALLOW_LOCAL_WEBHOOK_URLS="true" (dev/local-faults.ts). */
  RETRY_TIME_SCALE?: string;
  QUEUE_SEND_FAILURES?: string;
  /** "true" (never in the deployed configuration) adds D1's rows read and statements to a `Server-Timing` header. */
  SERVER_TIMING?: string;
  /** "enforce" (never in the deployed configuration) runs every invocation under Cloudflare's limits (dev/within-limits.ts). */
  PLATFORM_LIMITS?: string;
  /** With PLATFORM_LIMITS: ms added to every D1 round trip to the primary, and to one a read replica may serve (by default the same), for measuring at a distance. */
  D1_ROUND_TRIP_MS?: string;
  D1_REPLICA_ROUND_TRIP_MS?: string;
  /** Days an ended delivery stays in the log (default 30); webhooks/retention.ts. */
  RETENTION_DAYS?: string;
  /** Where retention archives removed deliveries; optional. */
  ARCHIVE?: R2Bucket;
}

export interface AppEnv {
  Bindings: Env;
  Variables: {
    requestId: string;
    /** The directory, in this request's session. */
    directory: Db;
    /** After authentication: the caller's shard, in this request's session. Tenant verbs reach no other. */
    db: Db;
    /** That session itself: its bookmark, and a claim riding on its first round trip (middleware/idempotency.ts). */
    shardSession: RequestSession;
    caller: Caller;
    /** Set for a POST with an Idempotency-Key that runs: the request's hold on the key. */
    idempotency?: Claim;
    /** Set when SERVER_TIMING is on: what this request's statements cost D1. */
    d1Tally?: D1Tally;
  };
}
