import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { openDatabase } from "../../../src/db/client.ts";
import { tempDir } from "../../helpers/kiln.ts";

describe("database", () => {
  test("migrations apply to a fresh data dir, and again without change", async () => {
    const dir = tempDir();
    const first = await openDatabase(dir);
    const tables = () =>
      (first.$client.query("select name from sqlite_master where type='table' order by name").all() as { name: string }[]).map((r) => r.name);
    expect(tables()).toEqual(expect.arrayContaining(["teams", "api_keys", "incidents", "usage", "__drizzle_migrations"]));
    const applied = first.$client.query("select count(*) as n from __drizzle_migrations").get() as { n: number };
    first.$client.exec("insert into teams (name) values ('keep-me')");
    first.$client.close();

    const second = await openDatabase(dir);
    expect((second.$client.query("select count(*) as n from __drizzle_migrations").get() as { n: number }).n).toBe(applied.n);
    expect(second.$client.query("select name from teams").all()).toEqual([{ name: "keep-me" }]);
    expect((second.$client.query("pragma journal_mode").get() as { journal_mode: string }).journal_mode).toBe("wal");
    second.$client.close();
  });

  test("foreign keys are enforced again once migrations have run", async () => {
    const db = await openDatabase(tempDir());
    expect(db.$client.query("pragma foreign_keys").get()).toEqual({ foreign_keys: 1 });
    expect(() => db.$client.exec("insert into api_keys (team_id, name, secret_hash, hint) values (999, 'k', 'h', 'abcd')")).toThrow(
      /FOREIGN KEY constraint failed/,
    );
    db.$client.close();
  });

  test("journal timestamps strictly increase, so no migration is skipped on an existing database", () => {
    // drizzle's rule (kept by applyMigrations) applies a migration only if its `when` is later than the last one
    // applied: one generated on an older branch and merged after a newer one would never run on existing data.
    const journal = JSON.parse(readFileSync(join(import.meta.dir, "../../../src/db/migrations/meta/_journal.json"), "utf8")) as {
      entries: { idx: number; when: number; tag: string }[];
    };
    expect(journal.entries.length).toBeGreaterThan(0);
    journal.entries.forEach((e, i) => {
      expect(e.idx).toBe(i);
      if (i > 0) expect({ tag: e.tag, later: e.when > journal.entries[i - 1]!.when }).toEqual({ tag: e.tag, later: true });
    });
  });
});
