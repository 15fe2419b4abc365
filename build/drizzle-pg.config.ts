// drizzle-kit settings for Postgres: `bun run db:generate` writes SQL migrations under src/db/migrations-pg from src/db/schema-pg.ts.
import { defineConfig } from "drizzle-kit";

export default defineConfig({
  dialect: "postgresql",
  schema: "./src/db/schema-pg.ts",
  out: "./src/db/migrations-pg",
});
