// `npm run db:migrate -- --local --persist-to DIR`: the directory's and every shard's migrations, and
// run a second time it changes nothing (docs/operations.md).
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { d1Databases, wranglerSync } from "../../tools/lib/d1.mjs";
import { OFFLINE_ENV, ROOT, run } from "../../tools/lib/service.mjs";

/** Each database's schema and the migrations it recorded, read back through wrangler. */
function state(dir) {
  return Object.fromEntries(
    d1Databases().map(({ binding }) => {
      const sql =
        "select type, name, sql from sqlite_master where name not like 'sqlite_%' union all select 'applied', name, applied_at from d1_migrations order by 1, 2";
      const result = wranglerSync(["d1", "execute", binding, "--local", "--persist-to", dir, "--json", "--command", sql]);
      assert.equal(result.status, 0, result.stderr);
      return [binding, JSON.parse(result.stdout)[0].results];
    }),
  );
}

test("db:migrate applies the directory's and every shard's migrations, and a second run changes nothing", async () => {
  const dir = mkdtempSync(join(tmpdir(), "payments-migrate-"));
  try {
    const migrate = () =>
      run(process.execPath, ["tools/dev/migrate.mjs", "--local", "--persist-to", dir], { cwd: ROOT, env: { ...process.env, ...OFFLINE_ENV } });
    const first = await migrate();
    assert.equal(first.code, 0, first.stderr);
    assert.deepEqual(first.stdout.trim().split("\n"), ["DB: migrated", "SHARD_A: migrated", "SHARD_B: migrated"]);
    const before = state(dir);
    assert.ok(before.SHARD_A.some((row) => row.type === "table" && row.name === "webhook_deliveries"));
    assert.ok(before.DB.some((row) => row.type === "table" && row.name === "accounts"));
    const second = await migrate();
    assert.equal(second.code, 0, second.stderr);
    assert.deepEqual(second.stdout.trim().split("\n"), ["DB: up to date", "SHARD_A: up to date", "SHARD_B: up to date"]);
    assert.deepEqual(state(dir), before);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
