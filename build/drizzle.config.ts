// drizzle-kit settings: `bun run db:generate` writes SQL migrations under src/db/migrations from src/db/schema.ts.
import { defineConfig } from "drizzle-kit";

export default defineConfig({
  dialect: "sqlite",
  schema: "./src/db/schema.ts",
  out: "./src/db/migrations",
});
