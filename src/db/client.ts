// Opens the SQLite database (WAL, busy timeout, foreign keys) and applies the embedded migrations.
import { Database } from "bun:sqlite";
import { createHash } from "node:crypto";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { drizzle, type BunSQLiteDatabase } from "drizzle-orm/bun-sqlite";
import type { EmbeddedMigration } from "../../build/migrations-module.ts";
import { migrations as embedded } from "./migrations.gen.ts";
import * as schema from "./schema.ts";

export type Db = BunSQLiteDatabase<typeof schema> & { $client: Database };

export function openDatabase(dataDir: string, file = "kiln.db"): Db {
  mkdirSync(dataDir, { recursive: true });
  const sqlite = new Database(join(dataDir, file), { create: true, strict: true });
  sqlite.exec("PRAGMA journal_mode = WAL");
  sqlite.exec("PRAGMA busy_timeout = 5000");
  sqlite.exec("PRAGMA foreign_keys = ON");
  sqlite.exec("PRAGMA synchronous = NORMAL");
  const db = drizzle({ client: sqlite, schema });
  migrate(db, embedded);
  return db as Db;
}

/** Applies migrations not yet recorded in __drizzle_migrations; running it again changes nothing. */
export function migrate(db: BunSQLiteDatabase<typeof schema>, list: EmbeddedMigration[]): void {
  const metas = list.map((m) => ({
    sql: m.sql.split("--> statement-breakpoint"),
    bps: m.breakpoints,
    folderMillis: m.when,
    hash: createHash("sha256").update(m.sql).digest("hex"),
  }));
  // drizzle's own migrator reads the journal from disk; its dialect step takes the same list from memory.
  (db as unknown as { dialect: { migrate(m: unknown, s: unknown, c: unknown): void }; session: unknown }).dialect.migrate(
    metas,
    (db as unknown as { session: unknown }).session,
    { migrationsFolder: "(embedded)" },
  );
}
