// Writes the shard migration that holds the move triggers (migrations/shard/*_move_triggers.sql)
// from src/services/moves/tables.ts, the one list of what a move copies. Run it after that list
// changes, in a new custom migration (`npx drizzle-kit generate --config drizzle/shard.config.ts
// --custom --name move_triggers`) that first drops the old triggers; test/moves.test.ts checks the
// applied triggers against the list.
//   node tools/dev/move-triggers.mjs --print TABLE...   prints those tables' triggers instead, for a
//   generated migration that rebuilds a table (dropping a table drops its triggers).
import { build } from "esbuild";
import { readdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "../..");
const bundled = await build({ entryPoints: [join(ROOT, "src/services/moves/tables.ts")], bundle: true, write: false, format: "esm", platform: "neutral" });
const { MOVED_TABLES, moveTriggers } = await import(`data:text/javascript;base64,${Buffer.from(bundled.outputFiles[0].text).toString("base64")}`);
const printed = process.argv[2] === "--print" ? process.argv.slice(3) : null;
if (printed) {
  console.log(
    MOVED_TABLES.filter((table) => printed.includes(table.name))
      .flatMap(moveTriggers)
      .join("\n--> statement-breakpoint\n"),
  );
  process.exit(0);
}
const dir = join(ROOT, "migrations/shard");
const file = readdirSync(dir)
  .filter((name) => name.endsWith("_move_triggers.sql"))
  .sort()
  .at(-1);
const sql = MOVED_TABLES.flatMap(moveTriggers).join("\n--> statement-breakpoint\n");
writeFileSync(join(dir, file), `-- The move triggers (src/services/moves/tables.ts; written by tools/dev/move-triggers.mjs).\n${sql}\n`);
console.log(`Wrote migrations/shard/${file}: ${MOVED_TABLES.length * 3} triggers.`);
