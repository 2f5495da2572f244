/** A message of the DELIVERIES queue: which delivery to attempt, on which shard. Everything else is read from D1 when it arrives. */
export interface DeliveryMessage {
  delivery_id: string;
  shard: string;
}

/** A message of the DELIVERIES queue that moves a replay on by one step (webhooks/replays/steps.ts). */
export interface ReplayMessage {
  replay_id: string;
  shard: string;
}

/** What the DELIVERIES queue carries. */
export type QueueMessage = DeliveryMessage | ReplayMessage;

/** One shard's way to the DELIVERIES queue: every message it sends names the shard its delivery row lives on. */
export interface ShardQueue {
  queue: Queue<QueueMessage>;
  shard: string;
}

/** The Worker's bindings, as declared in wrangler.toml and its secrets. */
export interface Env {
  /** The directory: accounts, API users and which shard holds each account. */
  DB: D1Database;
  /** The shards (db/shards.ts): every account's own data lives in exactly one. */
  [shard: `SHARD_${string}`]: D1Database | undefined;
  DELIVERIES: Queue<QueueMessage>;
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
  /** Days an ended delivery stays in the log (default 30); webhooks/upkeep/retention.ts. */
  RETENTION_DAYS?: string;
  /**
   * Which cron trigger tends which shards, as JSON: `{"<cron expression>": "C,D", …}`. A trigger it
   * names tends those shards alone; any other tends the directory and every shard no trigger is
   * named for (default: one trigger tends all). More triggers keep the cron's pace past what one
   * run holds (docs/operations.md, "The cron").
   */
  CRON_SHARDS?: string;
  /** Where retention archives removed deliveries; optional. */
  ARCHIVE?: R2Bucket;
}
