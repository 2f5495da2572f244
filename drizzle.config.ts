import { defineConfig } from "drizzle-kit";

// drizzle-kit only generates SQL here; `wrangler d1 migrations apply` runs it.
export default defineConfig({
  dialect: "sqlite",
  schema: "./src/db/schema/index.ts",
  out: "./migrations",
});
