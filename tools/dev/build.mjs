// wrangler.toml's [build]: what `wrangler dev` and `wrangler deploy` need before they start. The
// static assets (build-assets.mjs, skipped when up to date), and the local D1 databases' migrations
// (the directory's and every shard's, in .wrangler/state: run twice, they change nothing), so that a
// fresh clone answers from `npx wrangler dev` at once. Callers that migrate their own databases
// (`npm start`, the benchmark's state in another folder) set PAYMENTS_LOCAL_MIGRATED=1.
import { migrateAll } from "../lib/d1.mjs";
import { buildAssets } from "./build-assets.mjs";

await buildAssets();
if (process.env.PAYMENTS_LOCAL_MIGRATED !== "1") {
  const failures = migrateAll({ log: (line) => console.log(`Local D1 ${line}.`) });
  for (const { binding, output } of failures) console.error(`Local D1 ${binding}: migrations failed\n${output}`);
  if (failures.length > 0) process.exit(1);
}
