// Builds the Worker's static assets (wrangler.toml [assets] -> public/) from packages in
// node_modules, so every page works offline and no asset comes from another origin.
// wrangler runs it before `wrangler dev` and `wrangler deploy` (wrangler.toml [build]); `npm test`
// runs it before the test pool. It builds only when its inputs changed since the last build
// (public/.build-stamp: a hash of the console's files, the packages it bundles and this file),
// so that each of them builds once however many of them run. public/ is never committed.
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const require = createRequire(import.meta.url);
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const OUT = join(ROOT, "public");
const STAMP = join(OUT, ".build-stamp");
const BUNDLED = ["redoc", "vite", "preact"];

/** Every file under `dir`, sorted. */
function files(dir) {
  return readdirSync(dir, { recursive: true })
    .map((name) => join(dir, String(name)))
    .filter((path) => statSync(path).isFile())
    .sort();
}

/** A hash of what the assets are built from. */
function inputsHash() {
  const hash = createHash("sha256");
  for (const path of [fileURLToPath(import.meta.url), ...files(join(ROOT, "console"))]) hash.update(relative(ROOT, path)).update(readFileSync(path));
  for (const name of BUNDLED) hash.update(`${name}@${JSON.parse(readFileSync(require.resolve(`${name}/package.json`), "utf8")).version}`);
  return hash.digest("hex");
}

/** Builds public/ unless it was built from these very inputs; says which. */
export async function buildAssets() {
  const inputs = inputsHash();
  if (existsSync(STAMP) && readFileSync(STAMP, "utf8") === inputs) {
    console.log("Assets (public/): up to date.");
    return;
  }
  await build();
  writeFileSync(STAMP, inputs);
  // Not a page: the stamp stays out of the deployed assets.
  writeFileSync(join(OUT, ".assetsignore"), ".build-stamp\n");
  console.log("Assets (public/): built.");
}

async function build() {
  // /docs renders the OpenAPI document with Redoc's standalone bundle. Its one reference to another
  // origin (the "API docs by Redocly" logo on its CDN) becomes an inline image, so nothing leaves
  // the machine; the build fails if a new Redoc moves it, rather than quietly fetching it again.
  const redoc = dirname(require.resolve("redoc/package.json"));
  const LOGO_URL = "https://cdn.redoc.ly/redoc/logo-mini.svg";
  const INLINE_LOGO = "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' width='1' height='1'/%3E";
  mkdirSync(join(OUT, "docs"), { recursive: true });
  const bundle = readFileSync(join(redoc, "bundles", "redoc.standalone.js"), "utf8");
  if (bundle.split(LOGO_URL).length !== 2) throw new Error(`build-assets: expected ${LOGO_URL} once in Redoc's bundle; check the new Redoc for other origins.`);
  writeFileSync(join(OUT, "docs", "redoc.standalone.js"), bundle.replace(LOGO_URL, INLINE_LOGO));
  copyFileSync(join(redoc, "bundles", "redoc.standalone.js.LICENSE.txt"), join(OUT, "docs", "redoc.standalone.js.LICENSE.txt"));

  // /console/: the console, built from console/ with Vite (its config says where: public/console).
  // Its headers (public/_headers, read by Workers static assets) allow this origin only.
  const vite = await import("vite");
  await vite.build({ configFile: join(ROOT, "console", "vite.config.ts") });
  writeFileSync(
    join(OUT, "_headers"),
    [
      "/console/*",
      "  Content-Security-Policy: default-src 'self'; img-src 'self' data:; style-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
      "  X-Content-Type-Options: nosniff",
      "  Referrer-Policy: no-referrer",
      "",
    ].join("\n"),
  );
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await buildAssets();
