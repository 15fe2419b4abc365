// Migrations over a database that already holds rows: table rebuilds keep rows and keys; broken keys roll back.
import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import type { EmbeddedMigration } from "../../../src/db/embedded-migration.ts";
import { openDatabase } from "../../../src/db/client.ts";
import { applyMigrations, MigrationError } from "../../../src/db/migrate.ts";
import { migrations } from "../../../src/db/migrations.gen.ts";
import { tempDir } from "../../helpers/kiln.ts";
import { sqliteOf } from "../../helpers/databases.ts";

const last = migrations[migrations.length - 1]!;

/** The data dir's database opened the way openDatabase opens it, with only the given migrations applied. */
function openAt(dir: string, list: EmbeddedMigration[]): Database {
  const sqlite = new Database(join(dir, "kiln.db"), { create: true, strict: true });
  sqlite.exec("PRAGMA journal_mode = WAL");
  sqlite.exec("PRAGMA foreign_keys = ON");
  applyMigrations(sqlite, list);
  return sqlite;
}

/** Two teams, three keys, four usage rows, written with the columns of the first migration only. */
function populate(sqlite: Database): void {
  sqlite.run(`
    insert into teams (id, name, rpm_limit) values (1, 'alpha', 60), (2, 'beta', null);
    insert into api_keys (id, team_id, name, secret_hash, hint, revoked_at) values
      (10, 1, 'a1', 'h1', 'aaaa', null), (11, 1, 'a2', 'h2', 'bbbb', 1700000000), (20, 2, 'b1', 'h3', 'cccc', null);
    insert into usage (id, request_id, team_id, key_id, model, endpoint, input_tokens, output_tokens, created_at) values
      (1, 'req_1', 1, 10, 'm-1', 'chat', 12, 3, 1700000001), (2, 'req_2', 1, 11, 'm-1', 'chat', 5, 0, 1700000002),
      (3, 'req_3', 2, 20, 'm-2', 'chat', 7, 9, 1700000003), (4, 'req_4', 2, 20, 'm-2', 'chat', 1, 1, 1700000004);
  `);
}

const snapshot = (sqlite: Database) => ({
  teams: sqlite.query("select id, name, rpm_limit from teams order by id").all(),
  keys: sqlite.query("select id, team_id, name, secret_hash, hint, revoked_at from api_keys order by id").all(),
  usage: sqlite.query("select id, request_id, team_id, key_id, model, input_tokens, output_tokens, created_at from usage order by id").all(),
  // Every usage row still reaches its key and team, and every key its team.
  joined: sqlite.query("select count(*) as n from usage u join api_keys k on k.id = u.key_id join teams t on t.id = u.team_id and t.id = k.team_id").get(),
});

/** A parent-table rebuild exactly as drizzle-kit 0.31 writes one (here: rpm_limit gains a default). */
const rebuildTeams: EmbeddedMigration = {
  tag: "9001_rebuild_teams",
  when: last.when + 1,
  breakpoints: true,
  sql: [
    "PRAGMA foreign_keys=OFF;",
    "CREATE TABLE `__new_teams` (\n\t`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,\n\t`name` text NOT NULL,\n\t`rpm_limit` integer DEFAULT 60,\n\t`tpm_limit` integer,\n\t`created_at` integer DEFAULT (unixepoch()) NOT NULL\n);\n",
    'INSERT INTO `__new_teams`("id", "name", "rpm_limit", "tpm_limit", "created_at") SELECT "id", "name", "rpm_limit", "tpm_limit", "created_at" FROM `teams`;',
    "DROP TABLE `teams`;",
    "ALTER TABLE `__new_teams` RENAME TO `teams`;",
    "PRAGMA foreign_keys=ON;",
    "CREATE UNIQUE INDEX `teams_name_unique` ON `teams` (`name`);",
  ].join("--> statement-breakpoint\n"),
};

describe("migrations over a populated database", () => {
  test("the migrations after the first keep every row and key of a database populated at the first", async () => {
    const dir = tempDir();
    const old = openAt(dir, migrations.slice(0, 1));
    populate(old);
    const before = snapshot(old);
    old.close();

    const db = await openDatabase(dir);
    expect(snapshot(sqliteOf(db).$client)).toEqual(before);
    expect(sqliteOf(db).$client.query("pragma foreign_key_check").all()).toEqual([]);
    expect(sqliteOf(db).$client.query("select count(*) as n from __drizzle_migrations").get()).toEqual({ n: migrations.length });
    // Rows from before the ledger columns read as completed, free and without reasoning or cache hits.
    expect(sqliteOf(db).$client.query("select distinct status, reasoning_tokens, cached_tokens, cost_micros from usage").all()).toEqual([
      { status: "completed", reasoning_tokens: 0, cached_tokens: 0, cost_micros: 0 },
    ]);
    sqliteOf(db).$client.close();
  });

  test("a drizzle-kit rebuild of a referenced table keeps its rows and every reference to them", () => {
    const dir = tempDir();
    const sqlite = openAt(dir, migrations);
    populate(sqlite);
    const before = snapshot(sqlite);

    expect(applyMigrations(sqlite, [...migrations, rebuildTeams])).toEqual([rebuildTeams.tag]);
    expect(snapshot(sqlite)).toEqual(before);
    expect(sqlite.query("pragma foreign_key_check").all()).toEqual([]);
    expect(sqlite.query("select sql from sqlite_master where name = 'teams'").get()).toEqual({ sql: expect.stringContaining("DEFAULT 60") });
    expect(sqlite.query("pragma foreign_keys").get()).toEqual({ foreign_keys: 1 });
    sqlite.close();
  });

  test("control: the same rebuild inside a transaction with enforcement on fails", () => {
    // What drizzle's own migrator does (its PRAGMA foreign_keys=OFF is a no-op inside BEGIN…COMMIT).
    const sqlite = openAt(tempDir(), migrations);
    populate(sqlite);
    const run = sqlite.transaction(() => {
      for (const stmt of rebuildTeams.sql.split("--> statement-breakpoint")) sqlite.run(stmt);
    });
    expect(() => run()).toThrow(/FOREIGN KEY constraint failed/);
    sqlite.close();
  });

  test("a migration that leaves a dangling reference is rolled back with the table named", () => {
    const sqlite = openAt(tempDir(), migrations);
    populate(sqlite);
    const before = snapshot(sqlite);
    const orphan: EmbeddedMigration = {
      tag: "9002_orphan_key",
      when: last.when + 2,
      breakpoints: true,
      sql: "INSERT INTO `api_keys` (id, team_id, name, secret_hash, hint) VALUES (30, 999, 'orphan', 'h', 'dddd');",
    };
    let error: unknown;
    try {
      applyMigrations(sqlite, [...migrations, orphan]);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(MigrationError);
    expect((error as Error).message).toContain("9002_orphan_key rolled back");
    expect((error as Error).message).toContain('table "api_keys" (team_id → teams): 1 row(s) with no parent row, rowid 30');
    expect(snapshot(sqlite)).toEqual(before);
    expect(sqlite.query("select count(*) as n from __drizzle_migrations").get()).toEqual({ n: migrations.length });
    expect(sqlite.query("pragma foreign_keys").get()).toEqual({ foreign_keys: 1 });
    sqlite.close();
  });

  test("start-up fails clearly when a pending migration meets rows with missing parents", async () => {
    const dir = tempDir();
    const old = openAt(dir, migrations.slice(0, 1));
    populate(old);
    // Rows written behind kiln's back with enforcement off: two usage rows whose key was deleted.
    old.exec("PRAGMA foreign_keys = OFF");
    old.run("delete from api_keys where id = 20");
    old.close();

    await expect(openDatabase(dir)).rejects.toThrow(/table "usage" \(key_id → api_keys\): 2 row\(s\) with no parent row, rowid 3, 4/);
    const after = new Database(join(dir, "kiln.db"));
    expect(after.query("select count(*) as n from __drizzle_migrations").get()).toEqual({ n: 1 });
    after.close();
  });
});
