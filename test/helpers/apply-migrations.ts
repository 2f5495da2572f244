import { applyD1Migrations, env } from "cloudflare:test";

// Runs before each test file; applying is idempotent, so files stay independent.
await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);
await applyD1Migrations(env.REPLICA, env.TEST_MIGRATIONS);
