// Dashboard accounts: operators (every team) and team members (their own team), managed with `kiln users`.
import { asc, eq } from "drizzle-orm";
import type { Db, Tables } from "./client.ts";

export type DashboardUser = Tables["dashboardUsers"]["$inferSelect"];
export const ROLES = ["operator", "member"] as const;
export type Role = (typeof ROLES)[number];

/** A new account; `teamId` is the member's team (null for an operator). Throws if the name is taken. */
export async function createUser(db: Db, u: { username: string; passwordHash: string; role: Role; teamId: number | null }): Promise<DashboardUser> {
  const { dashboardUsers } = db.t;
  const [user] = await db.q.insert(dashboardUsers).values(u).returning();
  return user!;
}

export async function findUser(db: Db, username: string): Promise<DashboardUser | undefined> {
  const { dashboardUsers } = db.t;
  const [user] = await db.q.select().from(dashboardUsers).where(eq(dashboardUsers.username, username)).limit(1);
  return user;
}

export async function findUserById(db: Db, id: number): Promise<DashboardUser | undefined> {
  const { dashboardUsers } = db.t;
  const [user] = await db.q.select().from(dashboardUsers).where(eq(dashboardUsers.id, id)).limit(1);
  return user;
}

export async function listUsers(db: Db): Promise<(DashboardUser & { team: string | null })[]> {
  const { dashboardUsers, teams } = db.t;
  const rows = await db.q
    .select({ user: dashboardUsers, team: teams.name })
    .from(dashboardUsers)
    .leftJoin(teams, eq(dashboardUsers.teamId, teams.id))
    .orderBy(asc(dashboardUsers.username));
  return rows.map((r) => ({ ...r.user, team: r.team }));
}

export async function countOperators(db: Db): Promise<number> {
  const { dashboardUsers } = db.t;
  return (await db.q.select({ id: dashboardUsers.id }).from(dashboardUsers).where(eq(dashboardUsers.role, "operator"))).length;
}

/** A new password ends every session the account had (whoever knew the old one is signed out). */
export async function setPassword(db: Db, id: number, passwordHash: string): Promise<void> {
  if (db.dialect === "sqlite") {
    const { lite, t } = db;
    lite.transaction((tx) => {
      tx.update(t.dashboardUsers).set({ passwordHash }).where(eq(t.dashboardUsers.id, id)).run();
      tx.delete(t.dashboardSessions).where(eq(t.dashboardSessions.userId, id)).run();
    });
    return;
  }
  const { pg, pt } = db;
  await pg.transaction(async (tx) => {
    await tx.update(pt.dashboardUsers).set({ passwordHash }).where(eq(pt.dashboardUsers.id, id));
    await tx.delete(pt.dashboardSessions).where(eq(pt.dashboardSessions.userId, id));
  });
}

export async function recordLogin(db: Db, id: number, nowS: number): Promise<void> {
  const { dashboardUsers } = db.t;
  await db.q.update(dashboardUsers).set({ lastLoginAt: nowS }).where(eq(dashboardUsers.id, id));
}

/** Deletes the account and (by cascade) its sessions; false when there was none. */
export async function deleteUser(db: Db, id: number): Promise<boolean> {
  const { dashboardUsers } = db.t;
  return (await db.q.delete(dashboardUsers).where(eq(dashboardUsers.id, id)).returning({ id: dashboardUsers.id })).length > 0;
}
