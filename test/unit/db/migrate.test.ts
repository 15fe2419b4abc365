import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { openDatabase } from "../../../src/db/client.ts";
import { applyMigrations } from "../../../src/db/migrate.ts";
import { migrations } from "../../../src/db/migrations.gen.ts";
import { tempDir } from "../../helpers/kiln.ts";
import { sqliteOf } from "../../helpers/databases.ts";

describe("database", () => {
  test("migrations apply to a fresh data dir, and again without change", async () => {
    const dir = tempDir();
    const first = await openDatabase(dir);
    const tables = () =>
      (sqliteOf(first).$client.query("select name from sqlite_master where type='table' order by name").all() as { name: string }[]).map((r) => r.name);
    expect(tables()).toEqual(expect.arrayContaining(["teams", "api_keys", "incidents", "usage", "__drizzle_migrations"]));
    const applied = sqliteOf(first).$client.query("select count(*) as n from __drizzle_migrations").get() as { n: number };
    sqliteOf(first).$client.exec("insert into teams (name) values ('keep-me')");
    sqliteOf(first).$client.close();

    const second = await openDatabase(dir);
    expect((sqliteOf(second).$client.query("select count(*) as n from __drizzle_migrations").get() as { n: number }).n).toBe(applied.n);
    expect(sqliteOf(second).$client.query("select name from teams").all()).toEqual([{ name: "keep-me" }]);
    expect((sqliteOf(second).$client.query("pragma journal_mode").get() as { journal_mode: string }).journal_mode).toBe("wal");
    sqliteOf(second).$client.close();
  });

  test("foreign keys are enforced again once migrations have run", async () => {
    const db = await openDatabase(tempDir());
    expect(sqliteOf(db).$client.query("pragma foreign_keys").get()).toEqual({ foreign_keys: 1 });
    expect(() => sqliteOf(db).$client.exec("insert into api_keys (team_id, name, secret_hash, hint) values (999, 'k', 'h', 'abcd')")).toThrow(
      /FOREIGN KEY constraint failed/,
    );
    sqliteOf(db).$client.close();
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

  test("the migration that adds the reasoning index fills it from the responses stored before it", () => {
    const sqlite = new Database(join(tempDir(), "kiln.db"), { create: true, strict: true });
    const at = migrations.findIndex((m) => m.tag === "0004_reasoning_items");
    applyMigrations(sqlite, migrations.slice(0, at));
    sqlite.run("insert into teams (id, name) values (1, 't'); insert into api_keys (id, team_id, name, secret_hash, hint) values (1, 1, 'k', 'h', 'hint')");
    const row = sqlite.query("insert into responses (id, team_id, key_id, model, status, request_json, response_json, created_at, updated_at, expires_at) values (?, 1, 1, 'm', 'completed', '{}', ?, 1, 1, 9999999999)");
    row.run("resp_1", JSON.stringify({ output: [{ id: "rs_1", type: "reasoning", summary: [] }, { id: "msg_1", type: "message" }, { id: "rs_2", type: "reasoning", summary: [] }] }));
    row.run("resp_broken", "{not json");
    applyMigrations(sqlite, migrations);
    expect(sqlite.query("select item_id, response_id from response_reasoning_items order by item_id").all()).toEqual([
      { item_id: "rs_1", response_id: "resp_1" },
      { item_id: "rs_2", response_id: "resp_1" },
    ]);
    sqlite.close();
  });
});
