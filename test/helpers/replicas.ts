import { applyD1Migrations, env } from "cloudflare:test";

/** Migrates the read replicas' stand-ins (REPLICA_DB, REPLICA_SHARD), for the test files that use them (the others skip the work). */
export function migrateReplicas(): Promise<unknown> {
  return Promise.all([applyD1Migrations(env.REPLICA_DB, env.MIGRATIONS_DIRECTORY), applyD1Migrations(env.REPLICA_SHARD, env.MIGRATIONS_SHARD)]);
}
