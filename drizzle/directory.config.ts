import { defineConfig } from "drizzle-kit";

// The directory database (binding DB). drizzle-kit only generates SQL; `npm run db:migrate` applies it.
export default defineConfig({
  dialect: "sqlite",
  schema: "./src/db/schema/directory.ts",
  out: "./migrations/directory",
});
