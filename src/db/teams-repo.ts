// Teams: the unit that owns keys, shares rate limits and is billed.
import { count, eq } from "drizzle-orm";
import type { Db } from "./client.ts";
import { teams } from "./schema.ts";

export type Team = typeof teams.$inferSelect;

export function createTeam(db: Db, name: string): Team {
  return db.insert(teams).values({ name }).returning().get();
}

export function findTeamByName(db: Db, name: string): Team | undefined {
  return db.select().from(teams).where(eq(teams.name, name)).get();
}

export function listTeams(db: Db): Team[] {
  return db.select().from(teams).orderBy(teams.id).all();
}

export function countTeams(db: Db): number {
  return db.select({ n: count() }).from(teams).get()?.n ?? 0;
}

export function findTeam(db: Db, id: number): Team | undefined {
  return db.select().from(teams).where(eq(teams.id, id)).get();
}

/** What `kiln teams set` changes: tier, limit overrides and restrictions (lists stored as JSON; null = none). */
export interface TeamSettings {
  tier?: string | null;
  rpmLimit?: number | null;
  tpmLimit?: number | null;
  allowedModels?: string[] | null;
  allowedEndpoints?: string[] | null;
}

export function updateTeam(db: Db, id: number, s: TeamSettings): Team {
  const set: Partial<Team> = {};
  if (s.tier !== undefined) set.tier = s.tier;
  if (s.rpmLimit !== undefined) set.rpmLimit = s.rpmLimit;
  if (s.tpmLimit !== undefined) set.tpmLimit = s.tpmLimit;
  if (s.allowedModels !== undefined) set.allowedModels = s.allowedModels && JSON.stringify(s.allowedModels);
  if (s.allowedEndpoints !== undefined) set.allowedEndpoints = s.allowedEndpoints && JSON.stringify(s.allowedEndpoints);
  if (!Object.keys(set).length) return findTeam(db, id)!;
  return db.update(teams).set(set).where(eq(teams.id, id)).returning().get()!;
}
