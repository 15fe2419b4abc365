// Applies the embedded drizzle-kit migrations with foreign-key enforcement off and checks every key before committing.
import type { Database } from "bun:sqlite";
import { createHash } from "node:crypto";
import type { EmbeddedMigration } from "./embedded-migration.ts";

/** drizzle's bookkeeping table: same name, columns and rule, so a database migrated by either agrees. */
const TABLE = "__drizzle_migrations";
const BREAKPOINT = "--> statement-breakpoint";

/** A migration broke a foreign key; it was rolled back and the database is as it was before. */
export class MigrationError extends Error {
  override name = "MigrationError";
}

interface Violation {
  table: string;
  rowid: number | null;
  parent: string;
  fkid: number;
}

/**
 * Applies every migration newer than the last one recorded (drizzle compares `when` with created_at, so a
 * migration older than the last applied one is skipped: the journal test keeps `when` increasing).
 * Returns the tags applied; none when the database is current.
 */
export function applyMigrations(sqlite: Database, list: EmbeddedMigration[]): string[] {
  const enforced = (sqlite.query("PRAGMA foreign_keys").get() as { foreign_keys: number }).foreign_keys === 1;
  // A table rebuild (create new, copy, drop old, rename) drops a table other tables reference: with enforcement
  // on, the drop fails or cascades. The pragma is a no-op inside a transaction, so it is switched around it.
  sqlite.run("PRAGMA foreign_keys = OFF");
  try {
    // IMMEDIATE takes the write lock before reading the last migration, so two processes opening the same
    // database at once cannot both apply the same migration.
    return sqlite
      .transaction(() => {
        sqlite.run(`CREATE TABLE IF NOT EXISTS "${TABLE}" (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at numeric)`);
        const last = sqlite.query(`SELECT created_at AS at FROM "${TABLE}" ORDER BY created_at DESC LIMIT 1`).get() as { at: number } | null;
        const pending = list.filter((m) => !last || Number(last.at) < m.when);
        for (const m of pending) {
          for (const stmt of m.sql.split(BREAKPOINT)) if (stmt.trim()) sqlite.run(stmt);
          sqlite.query(`INSERT INTO "${TABLE}" ("hash", "created_at") VALUES (?, ?)`).run(createHash("sha256").update(m.sql).digest("hex"), m.when);
        }
        if (pending.length) {
          // Checked inside the transaction, so a migration that leaves a dangling reference is rolled back whole.
          const broken = sqlite.query("PRAGMA foreign_key_check").all() as Violation[];
          if (broken.length) throw new MigrationError(describeViolations(sqlite, broken, pending.map((m) => m.tag)));
        }
        return pending.map((m) => m.tag);
      })
      .immediate();
  } finally {
    if (enforced) sqlite.run("PRAGMA foreign_keys = ON");
  }
}

/** One line per broken reference (table.column → parent), with a few row ids, for the operator to act on. */
function describeViolations(sqlite: Database, broken: Violation[], tags: string[]): string {
  const groups = new Map<string, { count: number; rowids: number[] }>();
  const fkLists = new Map<string, { id: number; from: string }[]>();
  for (const v of broken) {
    let fks = fkLists.get(v.table);
    if (!fks) fkLists.set(v.table, (fks = sqlite.query(`PRAGMA foreign_key_list("${v.table.replace(/"/g, '""')}")`).all() as { id: number; from: string }[]));
    const column = fks.find((f) => f.id === v.fkid)?.from;
    const key = `table "${v.table}" (${column ? `${column} → ` : ""}${v.parent})`;
    const group = groups.get(key) ?? { count: 0, rowids: [] };
    group.count++;
    if (v.rowid !== null && group.rowids.length < 5) group.rowids.push(v.rowid);
    groups.set(key, group);
  }
  const lines = [...groups].map(
    ([key, g]) => `  ${key}: ${g.count} row(s) with no parent row${g.rowids.length ? `, rowid ${g.rowids.join(", ")}${g.count > g.rowids.length ? ", …" : ""}` : ""}`,
  );
  return [
    `database migration ${tags.join(", ")} rolled back: PRAGMA foreign_key_check found references to missing rows in`,
    ...lines,
    "Fix or delete those rows (sqlite3 on kiln.db in the data dir), then start kiln again.",
  ].join("\n");
}
