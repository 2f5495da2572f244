import { applyD1Migrations, env } from "cloudflare:test";
import { boundShards } from "../../src/db/shards";

// Runs before each test file; applying is idempotent, so files stay independent.
await applyD1Migrations(env.DB, env.MIGRATIONS_DIRECTORY);
await applyD1Migrations(env.REPLICA_DB, env.MIGRATIONS_DIRECTORY);
for (const shard of [...boundShards(env).values(), env.REPLICA_SHARD]) await applyD1Migrations(shard, env.MIGRATIONS_SHARD);
