// Opens kiln's database and defines `Db`, the handle every repository function takes: SQLite (WAL, busy timeout,
// foreign keys, embedded migrations) today.
//
// How Postgres plugs in (issue 29), without changing anything outside src/db:
// - Outside src/db, `Db` is opaque: it is opened (openDatabase), passed to repository functions, all of which return
//   promises, and closed (closeDatabase); side files find their directory with localDirOf. Nothing else reads
//   `$client`, imports drizzle or writes SQL (test/unit/db/transactions.test.ts checks), so `Db` can become
//   `SqliteDb | PgDb`, chosen by KILN_DATABASE_URL.
// - Driver: drizzle-orm/bun-sql, present in the installed drizzle-orm 0.45.4 (BunSQLDatabase over Bun's built-in `SQL`
//   client; `db.transaction` runs in `sql.begin`, nested ones as savepoints). Migrations: drizzle-kit with dialect
//   "postgresql" into a folder of their own, embedded like SQLite's (build/migrations-module.ts); migrate.ts's
//   foreign-key pragmas have no Postgres counterpart.
// - Most repository queries are awaited drizzle builders (`.returning()`, `.limit(1)`), which read the same on both
//   dialects given the dialect's tables. SQLite-only, and so written again for Postgres: transaction bodies (below),
//   prepared statements read with `.get()` (pg: `.execute()`), the cached `$client.query` statements of the stored
//   stream and files, and SQLite SQL (json_each, strftime/unixepoch, INSERT OR IGNORE).
// - Transactions stay inside repository functions. On SQLite their bodies are synchronous: bun:sqlite commits when
//   the callback returns, so drizzle's `transaction(async (tx) => …)` commits at the first await and rolls nothing
//   back after it (test/unit/db/transactions.test.ts). Postgres's bodies await inside `transaction(async (tx) => …)`
//   and must lock what they check first (`SELECT … FOR UPDATE`: credit's balance, deleteTier's teams) or become one
//   conditional statement; on SQLite the database-wide write lock gives that for free.
// - Schema: schema.ts uses sqlite-core. A pg-core mirror needs bigint (mode "number") for unix times, money in
//   micro-units and byte counts (pg integer is 32-bit), boolean for the `mode: "boolean"` integers, identity columns
//   for autoIncrement, and `extract(epoch from now())` for the `unixepoch()` defaults. Generating both from one
//   neutral table list keeps them in step, but drizzle's inferred row types then need care; hand-written pg-core
//   tables plus a test comparing both (names, columns, nullability, indexes) is plainer. Either way `$inferSelect`
//   must keep the same shape, and the repository tests (test/helpers/databases.ts) run on each dialect.
import { Database } from "bun:sqlite";
import { mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { drizzle, type BunSQLiteDatabase } from "drizzle-orm/bun-sqlite";
import { applyMigrations } from "./migrate.ts";
import { migrations as embedded } from "./migrations.gen.ts";
import * as schema from "./schema.ts";

/** drizzle over bun:sqlite with kiln's schema. */
export type SqliteDb = BunSQLiteDatabase<typeof schema> & { $client: Database };

/** The database handle repository functions take (one dialect today). */
export type Db = SqliteDb;

export async function openDatabase(dataDir: string, file = "kiln.db"): Promise<Db> {
  mkdirSync(dataDir, { recursive: true });
  const sqlite = new Database(join(dataDir, file), { create: true, strict: true });
  sqlite.exec("PRAGMA journal_mode = WAL");
  sqlite.exec("PRAGMA busy_timeout = 5000");
  sqlite.exec("PRAGMA foreign_keys = ON");
  sqlite.exec("PRAGMA synchronous = NORMAL");
  try {
    applyMigrations(sqlite, embedded);
  } catch (e) {
    // Start-up stops here with the migration's own message; the handle must not outlive the failed open.
    sqlite.close();
    throw e;
  }
  return drizzle({ client: sqlite, schema }) as Db;
}

export async function closeDatabase(db: Db): Promise<void> {
  db.$client.close();
}

/**
 * The directory on this machine where files kept beside the database live (the settlement journal, which must work
 * when the database does not); null for an in-memory database.
 */
export function localDirOf(db: Db): string | null {
  const file = db.$client.filename;
  return file === "" || file === ":memory:" ? null : dirname(file);
}
