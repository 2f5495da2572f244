import type { Env } from "../env";
import { AppError } from "../errors";

/** A shard is a D1 database bound as `SHARD_<name>` (wrangler.toml); its name is what follows the prefix. */
const PREFIX = "SHARD_";

export type ShardBinding = `${typeof PREFIX}${string}`;

/** The shards this Worker is configured with, by name, in name order. */
export function boundShards(env: Env): Map<string, D1Database> {
  const found = new Map<string, D1Database>();
  for (const key of Object.keys(env).sort()) {
    const binding = env[key as ShardBinding];
    if (key.startsWith(PREFIX) && key.length > PREFIX.length && isD1(binding)) found.set(key.slice(PREFIX.length), binding);
  }
  return found;
}

/** The binding of shard `name`, or undefined when the configuration lacks it. */
export function shardBinding(env: Env, name: string): D1Database | undefined {
  const binding = env[`${PREFIX}${name}`];
  return isD1(binding) ? binding : undefined;
}

/**
 * The binding of the shard an account lives on. A shard the configuration lacks fails only its own
 * accounts' requests: one log line, and 500 `Service is not configured.`.
 */
export function requireShard(env: Env, name: string): D1Database {
  const binding = shardBinding(env, name);
  if (binding) return binding;
  shardNotConfigured(name);
  throw new AppError("not_configured", "Service is not configured.");
}

/** The one log line for a shard the configuration lacks, with what was being done (`context`). */
export function shardNotConfigured(name: unknown, context: Record<string, unknown> = {}): void {
  console.error(JSON.stringify({ type: "shard_not_configured", shard: name, binding: typeof name === "string" ? `${PREFIX}${name}` : null, ...context }));
}

function isD1(value: unknown): value is D1Database {
  return (
    typeof value === "object" && value !== null && typeof (value as D1Database).prepare === "function" && typeof (value as D1Database).batch === "function"
  );
}
