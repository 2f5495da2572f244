import { resolve } from "node:path";
import { defineConfig } from "vite";

// The console is built into the Worker's static assets (public/console), served at /console/.
// Preact's JSX through esbuild; no other plugin. Everything it loads is bundled: no other origin.
export default defineConfig({
  root: resolve(__dirname),
  base: "/console/",
  esbuild: { jsx: "automatic", jsxImportSource: "preact" },
  build: {
    outDir: resolve(__dirname, "../public/console"),
    emptyOutDir: true,
    assetsInlineLimit: 0,
    sourcemap: true,
  },
  logLevel: "warn",
});
