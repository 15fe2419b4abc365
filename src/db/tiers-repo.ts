// Pricing tiers kept in the database (`kiln tiers …`); config tiers (KILN_TIERS) are merged in by the gate.
import { eq, sql } from "drizzle-orm";
import type { Tier } from "../ratelimit/tiers.ts";
import type { Db } from "./client.ts";
import { preparedFor } from "./prepared.ts";
import { teams, tiers } from "./schema.ts";

export function upsertTier(db: Db, tier: Tier): void {
  db.insert(tiers).values(tier).onConflictDoUpdate({ target: tiers.name, set: { rpm: tier.rpm, tpm: tier.tpm } }).run();
}

const tierByName = preparedFor((db) =>
  db.select({ name: tiers.name, rpm: tiers.rpm, tpm: tiers.tpm }).from(tiers).where(eq(tiers.name, sql.placeholder("name"))).prepare(),
);

export function findDbTier(db: Db, name: string): Tier | undefined {
  return tierByName(db).get({ name });
}

export function listDbTiers(db: Db): Tier[] {
  return db.select({ name: tiers.name, rpm: tiers.rpm, tpm: tiers.tpm }).from(tiers).orderBy(tiers.name).all();
}

/** Deletes a tier no team names; returns the teams that still name it (then nothing is deleted). */
export function deleteTier(db: Db, name: string): { deleted: boolean; usedBy: string[] } {
  return db.transaction((tx) => {
    const usedBy = tx.select({ name: teams.name }).from(teams).where(eq(teams.tier, name)).all().map((t) => t.name);
    if (usedBy.length) return { deleted: false, usedBy };
    return { deleted: tx.delete(tiers).where(eq(tiers.name, name)).returning().all().length > 0, usedBy };
  });
}
