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
