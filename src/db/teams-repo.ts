// Teams: the unit that owns keys, shares rate limits and is billed.
import { count, eq } from "drizzle-orm";
import type { Db } from "./client.ts";
import { type CreatedKey, insertKey } from "./keys-repo.ts";
import { teams } from "./schema.ts";

export type Team = typeof teams.$inferSelect;

export async function createTeam(db: Db, name: string): Promise<Team> {
  const [team] = await db.insert(teams).values({ name }).returning();
  return team!;
}

export async function findTeamByName(db: Db, name: string): Promise<Team | undefined> {
  const [team] = await db.select().from(teams).where(eq(teams.name, name)).limit(1);
  return team;
}

export async function listTeams(db: Db): Promise<Team[]> {
  return await db.select().from(teams).orderBy(teams.id);
}

export async function countTeams(db: Db): Promise<number> {
  const [row] = await db.select({ n: count() }).from(teams);
  return row?.n ?? 0;
}

/**
 * On an empty database only: creates the team and its first key, and calls `handOver` with the key before committing
 * (synchronously, inside the transaction), so that a hand-over that throws leaves no team and no key. Null, and
 * nothing written, when the database has a team already.
 */
export async function createFirstTeam(db: Db, teamName: string, keyName: string, handOver: (key: CreatedKey) => void): Promise<CreatedKey | null> {
  // Count, create and hand over in one transaction, so two first starts cannot both create a first team.
  return db.transaction((tx) => {
    if ((tx.select({ n: count() }).from(teams).get()?.n ?? 0) > 0) return null;
    const team = tx.insert(teams).values({ name: teamName }).returning().get();
    const key = insertKey(tx, team.id, keyName);
    handOver(key);
    return key;
  });
}

export async function findTeam(db: Db, id: number): Promise<Team | undefined> {
  const [team] = await db.select().from(teams).where(eq(teams.id, id)).limit(1);
  return team;
}

/** What `kiln teams set` changes: tier, limit overrides and restrictions (lists stored as JSON; null = none). */
export interface TeamSettings {
  tier?: string | null;
  rpmLimit?: number | null;
  tpmLimit?: number | null;
  allowedModels?: string[] | null;
  allowedEndpoints?: string[] | null;
}

export async function updateTeam(db: Db, id: number, s: TeamSettings): Promise<Team> {
  const set: Partial<Team> = {};
  if (s.tier !== undefined) set.tier = s.tier;
  if (s.rpmLimit !== undefined) set.rpmLimit = s.rpmLimit;
  if (s.tpmLimit !== undefined) set.tpmLimit = s.tpmLimit;
  if (s.allowedModels !== undefined) set.allowedModels = s.allowedModels && JSON.stringify(s.allowedModels);
  if (s.allowedEndpoints !== undefined) set.allowedEndpoints = s.allowedEndpoints && JSON.stringify(s.allowedEndpoints);
  if (!Object.keys(set).length) return (await findTeam(db, id))!;
  const [team] = await db.update(teams).set(set).where(eq(teams.id, id)).returning();
  return team!;
}
