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
  logLevel: "warn",
});
