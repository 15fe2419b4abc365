// Signed-in dashboard sessions, by the sha256 of the cookie's token, with their CSRF token and hard expiry.
import { and, eq, gt, lte } from "drizzle-orm";
import type { Db } from "./client.ts";
import type { DashboardUser } from "./dashboard-users-repo.ts";

export interface SessionRow {
  tokenHash: string;
  userId: number;
  csrfToken: string;
  createdAt: number;
  expiresAt: number;
}

export async function insertSession(db: Db, row: SessionRow): Promise<void> {
  // Expired sessions go when a new one starts: the table never holds more than the live ones and a day's debris.
  if (db.dialect === "sqlite") {
    const { lite, t } = db;
    lite.transaction((tx) => {
      tx.delete(t.dashboardSessions).where(lte(t.dashboardSessions.expiresAt, row.createdAt)).run();
      tx.insert(t.dashboardSessions).values(row).run();
    });
    return;
  }
  const { pg, pt } = db;
  await pg.transaction(async (tx) => {
    await tx.delete(pt.dashboardSessions).where(lte(pt.dashboardSessions.expiresAt, row.createdAt));
    await tx.insert(pt.dashboardSessions).values(row);
  });
}

/** The live session with this token hash and its user; undefined when there is none or it expired. */
export async function liveSession(db: Db, tokenHash: string, nowS: number): Promise<{ session: SessionRow; user: DashboardUser } | undefined> {
  const { dashboardSessions, dashboardUsers } = db.t;
  const [row] = await db.q
    .select({ session: dashboardSessions, user: dashboardUsers })
    .from(dashboardSessions)
    .innerJoin(dashboardUsers, eq(dashboardSessions.userId, dashboardUsers.id))
    .where(and(eq(dashboardSessions.tokenHash, tokenHash), gt(dashboardSessions.expiresAt, nowS)))
    .limit(1);
  return row;
}

export async function deleteSession(db: Db, tokenHash: string): Promise<void> {
  const { dashboardSessions } = db.t;
  await db.q.delete(dashboardSessions).where(eq(dashboardSessions.tokenHash, tokenHash));
}
