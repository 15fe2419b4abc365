import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { readJournal, renderModule } from "../../../build/migrations-module.ts";

describe("embedded migrations", () => {
  test("src/db/migrations.gen.ts matches the drizzle-kit SQL folder (run `bun run db:generate` after a schema change)", () => {
    const root = join(import.meta.dir, "..", "..", "..");
    const fresh = renderModule(readJournal(join(root, "src", "db", "migrations")));
    expect(readFileSync(join(root, "src", "db", "migrations.gen.ts"), "utf8")).toBe(fresh);
  });
});
