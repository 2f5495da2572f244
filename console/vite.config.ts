import { resolve } from "node:path";
import { defineConfig } from "vite";

// The console is built into the Worker's static assets (public/console), served at /console/.
// Preact's JSX through Vite's own transformer (Oxc); no plugin. Everything it loads is bundled:
// no other origin.
const here = import.meta.dirname;
export default defineConfig({
  root: here,
  base: "/console/",
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
  build: {
    outDir: resolve(here, "../public/console"),
    emptyOutDir: true,
    assetsInlineLimit: 0,
    sourcemap: true,
  },
  // `npx vite --config console/vite.config.ts`: the console with hot reload, its API calls sent
  // on to `npm start` (API_ORIGIN to point elsewhere).
  server: {
    host: "127.0.0.1",
    proxy: Object.fromEntries(["/v1", "/v2"].map((prefix) => [prefix, process.env.API_ORIGIN ?? "http://127.0.0.1:8787"])),
  },
  logLevel: "warn",
});
