// The databases repository tests run on: each dialect opens a fresh, migrated database and offers the few things a
// test needs that repositories do not (raw reads, writes that fail on purpose, a second handle as another replica
// would hold). One test file runs on every dialect listed here (describe.each(DIALECTS)): SQLite, and Postgres on
// one server per test process (shared-postgres.ts).
import { SQL as Client } from "bun";
import { type SQL, sql } from "drizzle-orm";
import { PgDialect } from "drizzle-orm/pg-core";
import { closeDatabase, type Db, openDatabase, type SqliteDb } from "../../src/db/client.ts";
import { tempDir } from "./kiln.ts";
import { freshPostgresDatabase } from "./shared-postgres.ts";

export interface TestDatabase {
  db: Db;
  /** Runs a statement written with drizzle's `sql` (plain SQL both dialects read: no dialect functions). */
  run(query: SQL): Promise<void>;
  /** The rows a query written with drizzle's `sql` returns (64-bit integers as numbers on both dialects). */
  all<T>(query: SQL): Promise<T[]>;
  /** How many rows `table` has. */
  count(table: string): Promise<number>;
  /** Makes every insert into `table` fail as a full disk would, until the returned function is called. */
  failInserts(table: string): Promise<() => Promise<void>>;
  /** Another handle on the same database, as a second replica (or a second process) would open it; closed with this one. */
  another(): Promise<Db>;
  close(): Promise<void>;
}

export interface Dialect {
  name: "sqlite" | "postgres";
  open(): Promise<TestDatabase>;
  /** The error a second row with the same `column` value in `table` (a unique key) fails with. */
  duplicate(table: string, column: string): RegExp;
}

const sqlite: Dialect = {
  name: "sqlite",
  duplicate: (table, column) => new RegExp(`UNIQUE constraint failed: ${table}\\.${column}`),
  async open() {
    const dir = tempDir("kiln-db-");
    const db = await openDatabase(dir);
    const lite = sqliteOf(db);
    const others: Db[] = [];
    const t: TestDatabase = {
      db,
      run: async (query) => void lite.run(query),
      all: async <T>(query: SQL) => lite.all<T>(query),
      count: async (table) => (await t.all<{ n: number }>(sql`SELECT count(*) AS n FROM ${sql.identifier(table)}`))[0]!.n,
      async failInserts(table) {
        const trigger = sql.identifier(`kiln_test_fail_${table}`);
        await t.run(sql`CREATE TRIGGER ${trigger} BEFORE INSERT ON ${sql.identifier(table)} BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END`);
        return () => t.run(sql`DROP TRIGGER ${trigger}`);
      },
      another: async () => {
        const other = await openDatabase(dir);
        others.push(other);
        return other;
      },
      close: async () => {
        for (const d of [db, ...others]) await closeDatabase(d);
      },
    };
    return t;
  },
};

const pgDialect = new PgDialect();
/** int8 (counts, bigint columns) read as BigInt by the raw client, given back as numbers like SQLite's. */
const plain = (row: Record<string, unknown>) => Object.fromEntries(Object.entries(row).map(([k, v]) => [k, typeof v === "bigint" ? Number(v) : v]));

const postgres: Dialect = {
  name: "postgres",
  duplicate: (table, column) => new RegExp(`duplicate key value violates unique constraint "${table}_${column}_`),
  async open() {
    const url = await freshPostgresDatabase();
    // Small pools whose idle connections close: a test that leaves its database open does not hold the server's slots.
    const pool = { max: 4, idleTimeout: 2 };
    const db = await openDatabase(tempDir("kiln-db-"), { url, pool });
    const raw = new Client(url, { max: 1, bigint: true, idleTimeout: 2 });
    const others: Db[] = [];
    const t: TestDatabase = {
      db,
      run: async (query) => void (await t.all(query)),
      async all<T>(query: SQL) {
        const q = pgDialect.sqlToQuery(query);
        return ((await raw.unsafe(q.sql, q.params as unknown[])) as Record<string, unknown>[]).map(plain) as T[];
      },
      count: async (table) => (await t.all<{ n: number }>(sql`SELECT count(*) AS n FROM ${sql.identifier(table)}`))[0]!.n,
      async failInserts(table) {
        const trigger = sql.identifier(`kiln_test_fail_${table}`);
        await t.run(sql.raw(`CREATE OR REPLACE FUNCTION kiln_test_fail() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'database or disk is full'; END $$`));
        await t.run(sql`CREATE TRIGGER ${trigger} BEFORE INSERT ON ${sql.identifier(table)} FOR EACH ROW EXECUTE FUNCTION kiln_test_fail()`);
        return () => t.run(sql`DROP TRIGGER ${trigger} ON ${sql.identifier(table)}`);
      },
      another: async () => {
        const other = await openDatabase(tempDir("kiln-db-"), { url, pool });
        others.push(other);
        return other;
      },
      close: async () => {
        for (const d of [db, ...others]) await closeDatabase(d);
        await raw.close();
      },
    };
    return t;
  },
};

export const DIALECTS: Dialect[] = [sqlite, postgres];

/** The SQLite drizzle under a handle, for tests that look at SQLite itself; throws on another dialect. */
export function sqliteOf(db: Db): SqliteDb {
  if (db.dialect !== "sqlite") throw new Error(`this test reads SQLite, and the database is ${db.dialect}`);
  return db.lite;
}
