import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";

declare const process: { env: Record<string, string | undefined> };

export default defineConfig(async () => {
  const migrations = await readD1Migrations("./migrations");
  return {
    plugins: [
      cloudflareTest({
        main: "./src/index.ts",
        wrangler: { configPath: "./wrangler.toml" },
        miniflare: {
          bindings: {
            TEST_MIGRATIONS: migrations,
            ADMIN_TOKEN: "test-admin-token",
            ENCRYPTION_KEY: "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=",
            // Deliveries go to a receiver on 127.0.0.1; policy tests turn this off per request.
            ALLOW_LOCAL_WEBHOOK_URLS: "true",
            // Size of the deep-paging test; the figure uses 200000.
            PAGING_ROWS: process.env.PAGING_ROWS ?? "20000",
          },
        },
      }),
    ],
    test: {
      include: ["test/**/*.test.ts"],
      setupFiles: ["./test/helpers/apply-migrations.ts"],
      globalSetup: ["./test/helpers/global-receiver.ts"],
      // The Worker logs a JSON line per request; show logs only for failing tests.
      silent: "passed-only" as const,
    },
  };
});
