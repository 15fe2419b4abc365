// Opens kiln's database and defines `Db`, the handle every repository function takes: SQLite in the data dir (WAL,
// busy timeout, foreign keys, embedded migrations) by default, or Postgres when a URL is given (KILN_DATABASE_URL).
//
// How the two dialects share the repositories:
// - Outside src/db, `Db` is opaque: it is opened (openDatabase), passed to repository functions, all of which return
//   promises, and closed (closeDatabase); side files find their directory with localDirOf. Nothing else imports
//   drizzle or writes SQL (test/unit/db/transactions.test.ts checks).
// - The handle carries its dialect's drizzle and table set. `q` and `t` are typed as SQLite's (drizzle over bun:sqlite,
//   schema.ts) on both dialects: schema-pg.ts's rows have the same shapes (test/unit/db/schema-parity.test.ts), so a
//   query written once with `db.q` and `db.t` and awaited reads the same on both. Only what both query builders share
//   may be used through them: awaited builders, `.returning()`, `.limit()`, `onConflictDo…`, drizzle's `sql` with
//   plain SQL. Never `.get()`, `.all()`, `.run()` or `.prepare()` (SQLite's alone): transactions.test.ts finds them
//   after `db.q`, and the repository tests run on both dialects (test/helpers/databases.ts). Why not `SqliteDb | PgDb`:
//   a method called on that union does not type-check (the builders' signatures differ), and a copy of every query per
//   dialect would drift; typed as SQLite's, a query is written and checked once, and the type's one untruth (the
//   builder is Postgres's at run time) is confined to `q` and `t`.
// - Where the APIs or the SQL differ, a repository branches on `db.dialect` and uses the properly typed `db.lite`
//   (SqliteDb, with `db.t`) or `db.pg` (PgDb, with `db.pt`): transaction bodies, reads prepared once per database
//   (prepared.ts), the cached `$client.query` statements of the stored stream and files, and SQLite's own SQL
//   (json_each, strftime/unixepoch, INSERT OR IGNORE). SQLite keeps its statements exactly as they were.
// - Transactions stay inside repository functions. On SQLite their bodies are synchronous: bun:sqlite commits when
//   the callback returns, so drizzle's `transaction(async (tx) => …)` commits at the first await and rolls nothing
//   back after it (test/unit/db/transactions.test.ts); the database-wide write lock serializes them. On Postgres the
//   bodies are async (`db.pg.transaction(async (tx) => …)`, Bun's `sql.begin`) and run concurrently with other
//   replicas' at READ COMMITTED, so each body either locks what it checks first (`SELECT … FOR UPDATE`, a table lock)
//   or is written as conditional statements (`ON CONFLICT DO NOTHING … RETURNING`). A Postgres body must not return
//   an array: `sql.begin` awaits the elements of a returned array.
// - Postgres's int8 (bigint columns, count(*), sum()) comes back from raw SQL as a string: typed selects of the
//   bigint columns convert it, aggregates need `.mapWith(Number)`. Its errors are Bun's own (pg-client.ts unwraps
//   drizzle's, whose message would be the query and its parameters).
// - The local directory (localDirOf): SQLite's is the database file's; with Postgres it is this replica's own data
//   dir, so each replica keeps its settlement journal (a plain file that must work when the database does not) on its
//   own disk and replays it into the shared database (a settlement is written once per request id, whoever replays).
import { Database } from "bun:sqlite";
import { mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { drizzle, type BunSQLiteDatabase } from "drizzle-orm/bun-sqlite";
import { applyMigrations } from "./migrate.ts";
import { closableNow, guardSharedMemory } from "./shm-guard.ts";
import { migrations as embedded } from "./migrations.gen.ts";
import { closePostgres, openPostgres, type PgDb, type PostgresOptions } from "./pg-client.ts";
import * as schema from "./schema.ts";
import * as pgSchema from "./schema-pg.ts";

export type { PgDb };

/** drizzle over bun:sqlite with kiln's schema. */
export type SqliteDb = BunSQLiteDatabase<typeof schema> & { $client: Database };
/** kiln's tables as SQLite declares them: the types every query written once for both dialects is checked against. */
export type Tables = typeof schema;
export type PgTables = typeof pgSchema;

interface Shared {
  /** drizzle, typed as SQLite's whatever the dialect: only what both query builders share (see the top comment). */
  readonly q: SqliteDb;
  /** The dialect's tables, typed as SQLite's (same row shapes). */
  readonly t: Tables;
  /** Where files kept beside the database live on this machine; null for an in-memory SQLite database. */
  readonly localDir: string | null;
}

export interface SqliteHandle extends Shared {
  readonly dialect: "sqlite";
  readonly lite: SqliteDb;
}

export interface PgHandle extends Shared {
  readonly dialect: "postgres";
  readonly pg: PgDb;
  /** The same tables as `t`, typed as Postgres's. */
  readonly pt: PgTables;
}

/** SQLite's database in the data dir. */
const SQLITE_FILE = "kiln.db";

/** The database handle repository functions take: SQLite or Postgres. */
export type Db = SqliteHandle | PgHandle;

export interface OpenOptions {
  /** A postgres:// URL: the data goes to that database instead of SQLite in the data dir. */
  url?: string;
  /** Postgres's connection pool. */
  pool?: PostgresOptions;
}

/** Opens (and migrates) the database: Postgres at `opts.url` when given, else SQLite in `dataDir`. */
export async function openDatabase(dataDir: string, opts: OpenOptions = {}): Promise<Db> {
  mkdirSync(dataDir, { recursive: true });
  if (opts.url !== undefined) {
    const pg = await openPostgres(opts.url, opts.pool);
    // Postgres's tables, typed as SQLite's for the queries written once (the parity test keeps the rows alike).
    const shared = { q: pg as unknown as SqliteDb, t: pgSchema as unknown as Tables };
    return { dialect: "postgres", pg, pt: pgSchema, ...shared, localDir: dataDir };
  }
  const sqlite = new Database(join(dataDir, SQLITE_FILE), { create: true, strict: true });
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
  const file = sqlite.filename;
  const inMemory = file === "" || file === ":memory:";
  // After the migrations (which run before anything can have made the file unwritable), before any request.
  if (!inMemory) guardSharedMemory(sqlite);
  const lite = drizzle({ client: sqlite, schema }) as SqliteDb;
  return { dialect: "sqlite", lite, q: lite, t: schema, localDir: inMemory ? null : dirname(file) };
}

/** Where kiln's data is, as config says: KILN_DATABASE_URL and KILN_DATA_DIR (structural, so src/db needs no config). */
export interface DatabaseConfig {
  readonly dataDir: string;
  readonly databaseUrl?: string;
}

/** The Postgres at KILN_DATABASE_URL could not be opened (reached, logged into, or migrated): start-up stops with one line. */
export class DatabaseOpenError extends Error {
  override name = "DatabaseOpenError";
}

/** The database the config names: Postgres at its URL, else SQLite in the data dir. */
export async function openConfiguredDatabase(config: DatabaseConfig): Promise<Db> {
  if (config.databaseUrl === undefined) return openDatabase(config.dataDir);
  try {
    return await openDatabase(config.dataDir, { url: config.databaseUrl });
  } catch (e) {
    const { host, name } = databasePlace(config);
    throw new DatabaseOpenError(`cannot open the Postgres database ${name} on ${host} (KILN_DATABASE_URL): ${e instanceof Error ? e.message : String(e)}`);
  }
}

/** Where the data is, for the start-up log: the database's host and name (never its credentials), or SQLite's file. */
export function databasePlace(config: DatabaseConfig): Record<string, string> {
  if (config.databaseUrl === undefined) return { database: "sqlite", file: join(config.dataDir, SQLITE_FILE) };
  const u = new URL(config.databaseUrl);
  return { database: "postgres", host: u.host, name: decodeURIComponent(u.pathname.slice(1)) || "(the user's)" };
}

export async function closeDatabase(db: Db): Promise<void> {
  // An unwritable shared-memory file would make the closing checkpoint a SIGBUS: the process's exit releases it instead.
  if (db.dialect === "sqlite") {
    if (closableNow(db.lite.$client)) db.lite.$client.close();
  }
  else await closePostgres(db.pg);
}

/** SQLite's database file and the two beside it while it is open (WAL, shared memory); none for Postgres or in memory. */
export function databaseFiles(db: Db): string[] {
  if (db.dialect !== "sqlite" || db.localDir === null) return [];
  const file = db.lite.$client.filename;
  return [file, `${file}-wal`, `${file}-shm`];
}

/**
 * The directory on this machine where files kept beside the database live (the settlement journal, which must work
 * when the database does not): SQLite's directory, or this replica's data dir with Postgres; null for an in-memory
 * database.
 */
export function localDirOf(db: Db): string | null {
  return db.localDir;
}
