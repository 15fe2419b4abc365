// Dashboard accounts: operators (every team) and team members (their own team), managed with `kiln users`.
import { asc, eq } from "drizzle-orm";
import type { Db } from "./client.ts";
import { dashboardSessions, dashboardUsers, teams } from "./schema.ts";

export type DashboardUser = typeof dashboardUsers.$inferSelect;
export const ROLES = ["operator", "member"] as const;
export type Role = (typeof ROLES)[number];

/** A new account; `teamId` is the member's team (null for an operator). Throws if the name is taken. */
export async function createUser(db: Db, u: { username: string; passwordHash: string; role: Role; teamId: number | null }): Promise<DashboardUser> {
  const [user] = await db.insert(dashboardUsers).values(u).returning();
  return user!;
}

export async function findUser(db: Db, username: string): Promise<DashboardUser | undefined> {
  const [user] = await db.select().from(dashboardUsers).where(eq(dashboardUsers.username, username)).limit(1);
  return user;
}

export async function findUserById(db: Db, id: number): Promise<DashboardUser | undefined> {
  const [user] = await db.select().from(dashboardUsers).where(eq(dashboardUsers.id, id)).limit(1);
  return user;
}

export async function listUsers(db: Db): Promise<(DashboardUser & { team: string | null })[]> {
  const rows = await db
    .select({ user: dashboardUsers, team: teams.name })
    .from(dashboardUsers)
    .leftJoin(teams, eq(dashboardUsers.teamId, teams.id))
    .orderBy(asc(dashboardUsers.username));
  return rows.map((r) => ({ ...r.user, team: r.team }));
}

export async function countOperators(db: Db): Promise<number> {
  return (await db.select({ id: dashboardUsers.id }).from(dashboardUsers).where(eq(dashboardUsers.role, "operator"))).length;
}

/** A new password ends every session the account had (whoever knew the old one is signed out). */
export async function setPassword(db: Db, id: number, passwordHash: string): Promise<void> {
  db.transaction((tx) => {
    tx.update(dashboardUsers).set({ passwordHash }).where(eq(dashboardUsers.id, id)).run();
    tx.delete(dashboardSessions).where(eq(dashboardSessions.userId, id)).run();
  });
}

export async function recordLogin(db: Db, id: number, nowS: number): Promise<void> {
  await db.update(dashboardUsers).set({ lastLoginAt: nowS }).where(eq(dashboardUsers.id, id));
}

/** Deletes the account and (by cascade) its sessions; false when there was none. */
export async function deleteUser(db: Db, id: number): Promise<boolean> {
  return (await db.delete(dashboardUsers).where(eq(dashboardUsers.id, id)).returning({ id: dashboardUsers.id })).length > 0;
}
