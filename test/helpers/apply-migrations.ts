import { applyD1Migrations, env } from "cloudflare:test";
import { boundShards } from "../../src/db/shards";

// Runs before each test file; applying is idempotent, so files stay independent. Each database
// has its own SQLite file: they are migrated side by side. The read replicas' stand-ins are
// migrated only by the files that use them (replicas.ts).
await Promise.all([
  applyD1Migrations(env.DB, env.MIGRATIONS_DIRECTORY),
  ...[...boundShards(env).values()].map((shard) => applyD1Migrations(shard, env.MIGRATIONS_SHARD)),
]);
