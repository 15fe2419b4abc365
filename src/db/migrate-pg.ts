// Applies the embedded drizzle-kit Postgres migrations in one transaction under an advisory lock, so kiln replicas
// starting at once against one database apply each migration exactly once.
import type { SQL } from "bun";
import { createHash } from "node:crypto";
import type { EmbeddedMigration } from "./embedded-migration.ts";
import { migrations as embedded } from "./migrations-pg.gen.ts";

/**
 * drizzle's bookkeeping for Postgres: the schema, table, columns and rule of drizzle-orm's pg migrator (and so of
 * `drizzle-kit migrate`), so a database migrated by either agrees with this one.
 */
export const BOOKKEEPING = { schema: "drizzle", table: "__drizzle_migrations" } as const;
/** The advisory lock every kiln holds while it migrates: "kiln" in ASCII, a constant all replicas share. */
export const MIGRATION_LOCK = 0x6b696c6e;
const BREAKPOINT = "--> statement-breakpoint";
const TABLE = `"${BOOKKEEPING.schema}"."${BOOKKEEPING.table}"`;

/**
 * The migrations to apply after the one recorded last (drizzle compares `when` with created_at, so a migration
 * older than the last applied one is skipped: the journal test keeps `when` increasing). Pure.
 */
export function pendingMigrations(list: readonly EmbeddedMigration[], lastAppliedWhen: number | null): EmbeddedMigration[] {
  return list.filter((m) => lastAppliedWhen === null || lastAppliedWhen < m.when);
}

/** A migration's statements, in order, as drizzle-kit separated them. Pure. */
export function statementsOf(m: EmbeddedMigration): string[] {
  return m.sql.split(BREAKPOINT).filter((s) => s.trim() !== "");
}

/** What drizzle records for a migration: sha256 of its whole SQL file, hex. Pure. */
export function migrationHash(m: EmbeddedMigration): string {
  return createHash("sha256").update(m.sql).digest("hex");
}

/**
 * Applies every pending migration and records it, all in one transaction; returns the tags applied (none when the
 * database is current). A failing statement rolls back every migration of this call, and its bookkeeping.
 */
export async function applyPgMigrations(client: SQL, list: readonly EmbeddedMigration[] = embedded): Promise<string[]> {
  return client.begin(async (tx) => {
    // Taken before anything is read or created: a second replica waits here until the first commits, then finds
    // the bookkeeping table (a concurrent CREATE TABLE IF NOT EXISTS can fail) and nothing left to apply.
    await tx.unsafe(`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`);
    // "already exists, skipping" notices on every start after the first say nothing an operator needs.
    await tx.unsafe("SET LOCAL client_min_messages = warning");
    await tx.unsafe(`CREATE SCHEMA IF NOT EXISTS "${BOOKKEEPING.schema}"`);
    await tx.unsafe(`CREATE TABLE IF NOT EXISTS ${TABLE} (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at bigint)`);
    const [last] = (await tx.unsafe(`SELECT created_at FROM ${TABLE} ORDER BY created_at DESC LIMIT 1`)) as { created_at: string | number }[];
    const pending = pendingMigrations(list, last ? Number(last.created_at) : null);
    for (const m of pending) {
      for (const statement of statementsOf(m)) await tx.unsafe(statement);
      await tx.unsafe(`INSERT INTO ${TABLE} ("hash", "created_at") VALUES ($1, $2::bigint)`, [migrationHash(m), m.when]);
    }
    return pending.map((m) => m.tag);
  });
}
