// Pricing tiers kept in the database (`kiln tiers …`); config tiers (KILN_TIERS) are merged in by the gate.
import { eq, sql } from "drizzle-orm";
import type { Tier } from "../ratelimit/tiers.ts";
import type { Db } from "./client.ts";
import { preparedFirst } from "./prepared.ts";

export async function upsertTier(db: Db, tier: Tier): Promise<void> {
  const { tiers } = db.t;
  await db.q.insert(tiers).values(tier).onConflictDoUpdate({ target: tiers.name, set: { rpm: tier.rpm, tpm: tier.tpm } });
}

const tierByName = preparedFirst("kiln_tier_by_name", (q, { tiers }) =>
  q.select({ name: tiers.name, rpm: tiers.rpm, tpm: tiers.tpm }).from(tiers).where(eq(tiers.name, sql.placeholder("name"))),
);

/** Read on every keyed request whose team has a tier: a prepared statement. */
export async function findDbTier(db: Db, name: string): Promise<Tier | undefined> {
  return tierByName(db, { name });
}

export async function listDbTiers(db: Db): Promise<Tier[]> {
  const { tiers } = db.t;
  return await db.q.select({ name: tiers.name, rpm: tiers.rpm, tpm: tiers.tpm }).from(tiers).orderBy(tiers.name);
}

/** Deletes a tier no team names; returns the teams that still name it (then nothing is deleted). */
export async function deleteTier(db: Db, name: string): Promise<{ deleted: boolean; usedBy: string[] }> {
  if (db.dialect === "sqlite") {
    const { lite, t } = db;
    // The check and the delete in one transaction (a synchronous body on SQLite: see client.ts).
    return lite.transaction((tx) => {
      const usedBy = tx.select({ name: t.teams.name }).from(t.teams).where(eq(t.teams.tier, name)).all().map((r) => r.name);
      if (usedBy.length) return { deleted: false, usedBy };
      return { deleted: tx.delete(t.tiers).where(eq(t.tiers.name, name)).returning().all().length > 0, usedBy };
    });
  }
  const { pg, pt } = db;
  return pg.transaction(async (tx) => {
    // No team may take the tier between the check and the delete: SHARE mode waits for teams' writes in flight and
    // holds off new ones (another replica's `teams set --tier`) until this commits. A row lock could not: the team
    // that would take the tier does not name it yet.
    await tx.execute(sql`LOCK TABLE ${pt.teams} IN SHARE MODE`);
    const usedBy = (await tx.select({ name: pt.teams.name }).from(pt.teams).where(eq(pt.teams.tier, name)).orderBy(pt.teams.id)).map((r) => r.name);
    if (usedBy.length) return { deleted: false, usedBy };
    return { deleted: (await tx.delete(pt.tiers).where(eq(pt.tiers.name, name)).returning()).length > 0, usedBy };
  });
}
