// Teams: the unit that owns keys, shares rate limits and is billed.
import { count, eq, sql } from "drizzle-orm";
import type { Db, Tables } from "./client.ts";
import { type CreatedKey, insertKey, insertKeyPg } from "./keys-repo.ts";

export type Team = Tables["teams"]["$inferSelect"];

export async function createTeam(db: Db, name: string): Promise<Team> {
  const [team] = await db.q.insert(db.t.teams).values({ name }).returning();
  return team!;
}

export async function findTeamByName(db: Db, name: string): Promise<Team | undefined> {
  const { teams } = db.t;
  const [team] = await db.q.select().from(teams).where(eq(teams.name, name)).limit(1);
  return team;
}

export async function listTeams(db: Db): Promise<Team[]> {
  const { teams } = db.t;
  return await db.q.select().from(teams).orderBy(teams.id);
}

export async function countTeams(db: Db): Promise<number> {
  const [row] = await db.q.select({ n: count() }).from(db.t.teams);
  return row?.n ?? 0;
}

/**
 * On an empty database only: creates the team and its first key, and calls `handOver` with the key before committing
 * (synchronously, inside the transaction), so that a hand-over that throws leaves no team and no key. Null, and
 * nothing written, when the database has a team already.
 */
export async function createFirstTeam(db: Db, teamName: string, keyName: string, handOver: (key: CreatedKey) => void): Promise<CreatedKey | null> {
  if (db.dialect === "sqlite") {
    const { lite, t } = db;
    // Count, create and hand over in one transaction (SQLite's write lock), so two first starts cannot both create a first team.
    return lite.transaction((tx) => {
      if ((tx.select({ n: count() }).from(t.teams).get()?.n ?? 0) > 0) return null;
      const team = tx.insert(t.teams).values({ name: teamName }).returning().get();
      const key = insertKey(tx, t, team.id, keyName);
      handOver(key);
      return key;
    });
  }
  // Every start asks; only an empty database takes the lock.
  if ((await countTeams(db)) > 0) return null;
  const { pg, pt } = db;
  return pg.transaction(async (tx) => {
    // Replicas starting at once: the first holds the lock (no team can be written meanwhile) until it commits; the
    // others wait here, then count its team and create nothing.
    await tx.execute(sql`LOCK TABLE ${pt.teams} IN SHARE ROW EXCLUSIVE MODE`);
    if (((await tx.select({ n: count() }).from(pt.teams))[0]?.n ?? 0) > 0) return null;
    const [team] = await tx.insert(pt.teams).values({ name: teamName }).returning();
    const key = await insertKeyPg(tx, pt, team!.id, keyName);
    handOver(key);
    return key;
  });
}

export async function findTeam(db: Db, id: number): Promise<Team | undefined> {
  const { teams } = db.t;
  const [team] = await db.q.select().from(teams).where(eq(teams.id, id)).limit(1);
  return team;
}

/** What `kiln teams set` changes: tier, limit overrides, restrictions and service tiers (lists stored as JSON; null = none). */
export interface TeamSettings {
  tier?: string | null;
  rpmLimit?: number | null;
  tpmLimit?: number | null;
  allowedModels?: string[] | null;
  allowedEndpoints?: string[] | null;
  /** The service tiers the team may run in (null: the default set, src/access/tier-policy.ts). */
  serviceTiers?: string[] | null;
  /** The team's own price factors by tier, thousandths (null: the server's, src/billing/tier-prices.ts). */
  tierPrices?: Record<string, number> | null;
}

export async function updateTeam(db: Db, id: number, s: TeamSettings): Promise<Team> {
  const { teams } = db.t;
  const set: Partial<Team> = {};
  if (s.tier !== undefined) set.tier = s.tier;
  if (s.rpmLimit !== undefined) set.rpmLimit = s.rpmLimit;
  if (s.tpmLimit !== undefined) set.tpmLimit = s.tpmLimit;
  if (s.allowedModels !== undefined) set.allowedModels = s.allowedModels && JSON.stringify(s.allowedModels);
  if (s.allowedEndpoints !== undefined) set.allowedEndpoints = s.allowedEndpoints && JSON.stringify(s.allowedEndpoints);
  if (s.serviceTiers !== undefined) set.serviceTiers = s.serviceTiers && JSON.stringify(s.serviceTiers);
  if (s.tierPrices !== undefined) set.tierPrices = s.tierPrices && JSON.stringify(s.tierPrices);
  if (!Object.keys(set).length) return (await findTeam(db, id))!;
  const [team] = await db.q.update(teams).set(set).where(eq(teams.id, id)).returning();
  return team!;
}
