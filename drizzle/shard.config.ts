import { defineConfig } from "drizzle-kit";

// Every shard database (the SHARD_<name> bindings). drizzle-kit only generates SQL; `npm run db:migrate` applies it.
export default defineConfig({
  dialect: "sqlite",
  schema: "./src/db/schema/shard.ts",
  out: "./migrations/shard",
});
