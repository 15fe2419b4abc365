// Pricing tiers kept in the database (`kiln tiers …`); config tiers (KILN_TIERS) are merged in by the gate.
import { eq, sql } from "drizzle-orm";
import type { Tier } from "../ratelimit/tiers.ts";
import type { Db } from "./client.ts";
import { preparedFor } from "./prepared.ts";
import { teams, tiers } from "./schema.ts";

export async function upsertTier(db: Db, tier: Tier): Promise<void> {
  await db.insert(tiers).values(tier).onConflictDoUpdate({ target: tiers.name, set: { rpm: tier.rpm, tpm: tier.tpm } });
}

const tierByName = preparedFor((db) =>
  db.select({ name: tiers.name, rpm: tiers.rpm, tpm: tiers.tpm }).from(tiers).where(eq(tiers.name, sql.placeholder("name"))).prepare(),
);

/** Read on every keyed request whose team has a tier: a prepared statement. */
export async function findDbTier(db: Db, name: string): Promise<Tier | undefined> {
  return tierByName(db).get({ name });
}

export async function listDbTiers(db: Db): Promise<Tier[]> {
  return await db.select({ name: tiers.name, rpm: tiers.rpm, tpm: tiers.tpm }).from(tiers).orderBy(tiers.name);
}

/** Deletes a tier no team names; returns the teams that still name it (then nothing is deleted). */
export async function deleteTier(db: Db, name: string): Promise<{ deleted: boolean; usedBy: string[] }> {
  // The check and the delete in one transaction (a synchronous body on SQLite: see client.ts).
  return db.transaction((tx) => {
    const usedBy = tx.select({ name: teams.name }).from(teams).where(eq(teams.tier, name)).all().map((t) => t.name);
    if (usedBy.length) return { deleted: false, usedBy };
    return { deleted: tx.delete(tiers).where(eq(tiers.name, name)).returning().all().length > 0, usedBy };
  });
}
