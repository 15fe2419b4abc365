// The databases repository tests run on: each dialect opens a fresh, migrated database and offers the few things a
// test needs that repositories do not (raw reads, and writes that fail on purpose). One test file runs on every
// dialect listed here (describe.each(DIALECTS)); SQLite today, Postgres joins the list when it exists.
import { type SQL, sql } from "drizzle-orm";
import { closeDatabase, type Db, openDatabase } from "../../src/db/client.ts";
import { tempDir } from "./kiln.ts";

export interface TestDatabase {
  db: Db;
  /** Runs a statement written with drizzle's `sql` (plain SQL both dialects read: no dialect functions). */
  run(query: SQL): Promise<void>;
  /** The rows a query written with drizzle's `sql` returns. */
  all<T>(query: SQL): Promise<T[]>;
  /** How many rows `table` has. */
  count(table: string): Promise<number>;
  /** Makes every insert into `table` fail as a full disk would, until the returned function is called. */
  failInserts(table: string): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

export interface Dialect {
  name: string;
  open(): Promise<TestDatabase>;
  /** The error a second row with the same `column` value in `table` (a unique key) fails with. */
  duplicate(table: string, column: string): RegExp;
}

const sqlite: Dialect = {
  name: "sqlite",
  duplicate: (table, column) => new RegExp(`UNIQUE constraint failed: ${table}\\.${column}`),
  async open() {
    const db = await openDatabase(tempDir("kiln-db-"));
    const t: TestDatabase = {
      db,
      run: async (query) => void db.run(query),
      all: async <T>(query: SQL) => db.all<T>(query),
      count: async (table) => (await t.all<{ n: number }>(sql`SELECT count(*) AS n FROM ${sql.identifier(table)}`))[0]!.n,
      async failInserts(table) {
        const trigger = sql.identifier(`kiln_test_fail_${table}`);
        await t.run(sql`CREATE TRIGGER ${trigger} BEFORE INSERT ON ${sql.identifier(table)} BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END`);
        return () => t.run(sql`DROP TRIGGER ${trigger}`);
      },
      close: () => closeDatabase(db),
    };
    return t;
  },
};

export const DIALECTS: Dialect[] = [sqlite];
