// Opens kiln's database and defines `Db`, the handle every repository function takes: SQLite (WAL, busy timeout,
// foreign keys, embedded migrations) today.
//
// How Postgres plugs in (issue 29), without changing anything outside src/db:
// - Outside src/db, `Db` is opaque: it is opened (openDatabase), passed to repository functions, all of which return
//   promises, and closed (closeDatabase); the data dir for side files comes from localDirOf. Nothing else reads
//   `$client` or writes SQL, so `Db` can become `SqliteDb | PgDb` chosen by KILN_DATABASE_URL.
// - Driver: drizzle-orm/bun-sql (in the installed drizzle-orm 0.45.4: BunSQLDatabase over Bun's built-in `SQL`
//   client; `db.transaction` runs in `sql.begin`, nested ones as savepoints). Migrations: drizzle-kit with dialect
//   "postgresql" into their own folder, embedded like SQLite's (build/migrations-module.ts); migrate.ts's foreign-key
//   pragmas have no Postgres counterpart (constraints are checked per statement there).
// - Transactions stay inside repository functions. On SQLite their bodies are synchronous: bun:sqlite commits when
//   the callback returns, so drizzle's `transaction(async (tx) => …)` commits at the first await and does not roll
//   back what follows (test/unit/db/transactions.test.ts pins this). Postgres's versions await inside
//   `transaction(async (tx) => …)` and lock what they check first (`SELECT … FOR UPDATE`) or use one conditional
//   statement; those few functions (see `transaction(` in src/db) get a body per dialect, the rest share one.
// - Schema: schema.ts uses sqlite-core. A pg-core mirror needs bigint (mode "number") for unix times, money in
//   micro-units and byte counts (pg integer is 32-bit), boolean for the `mode: "boolean"` integers, identity columns
//   for autoIncrement, and `extract(epoch from now())` for the `unixepoch()` defaults; a few repos use SQLite SQL
//   (json_each, strftime, INSERT OR IGNORE). Generating both from one neutral table list keeps them in step, but
//   drizzle's inferred row types then need care; hand-written pg-core tables plus a test comparing both (names,
//   columns, nullability, indexes) is plainer. Either way `$inferSelect` must stay the same shape for both.
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
