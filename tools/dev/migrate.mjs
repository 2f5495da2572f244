// `npm run db:migrate -- --local [--persist-to DIR]` or `npm run db:migrate -- --remote`: applies the
// directory's migrations (migrations/directory) and every shard's (migrations/shard) to each D1
// database of wrangler.toml. Run twice, it changes nothing the second time.
import { parseArgs } from "node:util";
import { migrateAll } from "../lib/d1.mjs";

const { values } = parseArgs({ options: { local: { type: "boolean" }, remote: { type: "boolean" }, "persist-to": { type: "string" } } });
if (values.local === values.remote) {
  console.error("npm run db:migrate: say --local (with --persist-to DIR if you like) or --remote.");
  process.exit(2);
}
if (values.remote && values["persist-to"]) {
  console.error("npm run db:migrate: --persist-to is for --local only.");
  process.exit(2);
}
const failures = migrateAll({ where: values.remote ? "--remote" : "--local", persistTo: values["persist-to"], log: (line) => console.log(line) });
for (const { binding, output } of failures) console.error(`${binding}: migrations failed\n${output}`);
process.exit(failures.length === 0 ? 0 : 1);
