// Dashboard accounts: operators (every team) and team members (their own team), managed with `kiln users`.
import { asc, eq } from "drizzle-orm";
import type { Db } from "./client.ts";
import { dashboardSessions, dashboardUsers, teams } from "./schema.ts";

export type DashboardUser = typeof dashboardUsers.$inferSelect;
export const ROLES = ["operator", "member"] as const;
export type Role = (typeof ROLES)[number];

/** A new account; `teamId` is the member's team (null for an operator). Throws if the name is taken. */
export function createUser(db: Db, u: { username: string; passwordHash: string; role: Role; teamId: number | null }): DashboardUser {
  return db.insert(dashboardUsers).values(u).returning().get();
}

export function findUser(db: Db, username: string): DashboardUser | undefined {
  return db.select().from(dashboardUsers).where(eq(dashboardUsers.username, username)).get();
}

export function findUserById(db: Db, id: number): DashboardUser | undefined {
  return db.select().from(dashboardUsers).where(eq(dashboardUsers.id, id)).get();
}

export function listUsers(db: Db): (DashboardUser & { team: string | null })[] {
  return db
    .select({ user: dashboardUsers, team: teams.name })
    .from(dashboardUsers)
    .leftJoin(teams, eq(dashboardUsers.teamId, teams.id))
    .orderBy(asc(dashboardUsers.username))
    .all()
    .map((r) => ({ ...r.user, team: r.team }));
}

export function countOperators(db: Db): number {
  return db.select({ id: dashboardUsers.id }).from(dashboardUsers).where(eq(dashboardUsers.role, "operator")).all().length;
}

/** A new password ends every session the account had (whoever knew the old one is signed out). */
export function setPassword(db: Db, id: number, passwordHash: string): void {
  db.transaction((tx) => {
    tx.update(dashboardUsers).set({ passwordHash }).where(eq(dashboardUsers.id, id)).run();
    tx.delete(dashboardSessions).where(eq(dashboardSessions.userId, id)).run();
  });
}

export function recordLogin(db: Db, id: number, nowS: number): void {
  db.update(dashboardUsers).set({ lastLoginAt: nowS }).where(eq(dashboardUsers.id, id)).run();
}

/** Deletes the account and (by cascade) its sessions; false when there was none. */
export function deleteUser(db: Db, id: number): boolean {
  return db.delete(dashboardUsers).where(eq(dashboardUsers.id, id)).returning({ id: dashboardUsers.id }).all().length > 0;
}
