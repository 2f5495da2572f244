// Builds the Worker's static assets (wrangler.toml [assets] -> public/) from packages in
// node_modules, so every page works offline and no asset comes from another origin.
// Run by `npm start`, `npm test` and `npm run deploy`; public/ is never committed.
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

const require = createRequire(import.meta.url);
const OUT = "public";

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
const { build } = await import("vite");
await build({ configFile: join("console", "vite.config.ts") });
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
