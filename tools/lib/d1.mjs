// The D1 databases of wrangler.toml as the tools see them: the directory (`DB`) and the shards
// (`SHARD_<name>`), and the one way the tools apply their migrations (`npm run db:migrate`).
import { spawnSync } from "node:child_process";
import { resolve } from "node:path";
import { experimental_readRawConfig } from "wrangler";
import { OFFLINE_ENV, ROOT } from "./service.mjs";

const WRANGLER = resolve(ROOT, "node_modules/.bin/wrangler");

/** Every D1 binding of the configuration in `dir`: `{ binding, migrationsDir, shard }` (shard: its name, or null for the directory). */
export function d1Databases(dir = ROOT) {
  const { rawConfig } = experimental_readRawConfig({ config: resolve(dir, "wrangler.toml") });
  return (rawConfig.d1_databases ?? []).map((db) => ({
    binding: db.binding,
    migrationsDir: db.migrations_dir,
    shard: db.binding.startsWith("SHARD_") ? db.binding.slice("SHARD_".length) : null,
  }));
}

/** The shards' names, in name order (as the Worker orders them). */
export const shardNames = (dir = ROOT) =>
  d1Databases(dir)
    .flatMap((db) => (db.shard === null ? [] : [db.shard]))
    .sort();

/** Runs wrangler in `dir`, offline; returns its result (stdout and stderr as text). */
export function wranglerSync(args, { dir = ROOT, input } = {}) {
  return spawnSync(WRANGLER, args, { cwd: dir, env: { ...process.env, ...OFFLINE_ENV, CI: "true" }, encoding: "utf8", input });
}

/**
 * Applies the directory's and every shard's migrations: `where` is "--local" or "--remote";
 * `persistTo`, a local state folder. Each database records what it applied, so running it again
 * changes nothing. Returns the failures (empty when every database is up to date).
 */
export function migrateAll({ where = "--local", persistTo, dir = ROOT, log = () => {} } = {}) {
  const failures = [];
  for (const { binding } of d1Databases(dir)) {
    const args = ["d1", "migrations", "apply", binding, where, ...(persistTo ? ["--persist-to", persistTo] : [])];
    const result = wranglerSync(args, { dir, input: "y\n" });
    if (result.status === 0) log(`${binding}: ${/No migrations to apply/.test(result.stdout) ? "up to date" : "migrated"}`);
    else failures.push({ binding, output: `${result.stdout}${result.stderr}` });
  }
  return failures;
}
