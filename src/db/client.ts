// Opens the SQLite database (WAL, busy timeout, foreign keys) and applies the embedded migrations.
import { Database } from "bun:sqlite";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { drizzle, type BunSQLiteDatabase } from "drizzle-orm/bun-sqlite";
import { applyMigrations } from "./migrate.ts";
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
  try {
    applyMigrations(sqlite, embedded);
  } catch (e) {
    // Start-up stops here with the migration's own message; the handle must not outlive the failed open.
    sqlite.close();
    throw e;
  }
  return drizzle({ client: sqlite, schema }) as Db;
}
