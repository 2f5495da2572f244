// Builds the client for use outside this repository: plain JavaScript with its types in dist/
// (Node 20+, Workers, Deno, Bun, any bundler), from src/. The root's `npm install` runs it, and
// `npm pack` (prepack) before it packs. dist/ is never committed.
import { spawnSync } from "node:child_process";
import { copyFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
const built = spawnSync(process.execPath, [tsc, "-p", join(here, "tsconfig.build.json")], { stdio: "inherit" });
if (built.status !== 0) process.exit(built.status ?? 1);
// tsc emits no .d.ts input: the generated types go beside the declarations that import them.
copyFileSync(join(here, "src", "schema.d.ts"), join(here, "dist", "schema.d.ts"));
