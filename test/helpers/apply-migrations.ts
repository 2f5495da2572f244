import { applyD1Migrations, env } from "cloudflare:test";
import { boundShards } from "../../src/db/shards";

// Runs before each test file; applying is idempotent, so files stay independent. Each database
// has its own SQLite file: they are migrated side by side.
await Promise.all([
  applyD1Migrations(env.DB, env.MIGRATIONS_DIRECTORY),
  applyD1Migrations(env.REPLICA_DB, env.MIGRATIONS_DIRECTORY),
  ...[...boundShards(env).values(), env.REPLICA_SHARD].map((shard) => applyD1Migrations(shard, env.MIGRATIONS_SHARD)),
]);
