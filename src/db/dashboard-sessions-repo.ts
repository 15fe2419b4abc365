// Signed-in dashboard sessions, by the sha256 of the cookie's token, with their CSRF token and hard expiry.
import { and, eq, gt, lte } from "drizzle-orm";
import type { Db } from "./client.ts";
import type { DashboardUser } from "./dashboard-users-repo.ts";
import { dashboardSessions, dashboardUsers } from "./schema.ts";

export interface SessionRow {
  tokenHash: string;
  userId: number;
  csrfToken: string;
  createdAt: number;
  expiresAt: number;
}

export async function insertSession(db: Db, row: SessionRow): Promise<void> {
  db.transaction((tx) => {
    // Expired sessions go when a new one starts: the table never holds more than the live ones and a day's debris.
    tx.delete(dashboardSessions).where(lte(dashboardSessions.expiresAt, row.createdAt)).run();
    tx.insert(dashboardSessions).values(row).run();
  });
}

/** The live session with this token hash and its user; undefined when there is none or it expired. */
export async function liveSession(db: Db, tokenHash: string, nowS: number): Promise<{ session: SessionRow; user: DashboardUser } | undefined> {
  const [row] = await db
    .select({ session: dashboardSessions, user: dashboardUsers })
    .from(dashboardSessions)
    .innerJoin(dashboardUsers, eq(dashboardSessions.userId, dashboardUsers.id))
    .where(and(eq(dashboardSessions.tokenHash, tokenHash), gt(dashboardSessions.expiresAt, nowS)))
    .limit(1);
  return row;
}

export async function deleteSession(db: Db, tokenHash: string): Promise<void> {
  await db.delete(dashboardSessions).where(eq(dashboardSessions.tokenHash, tokenHash));
}
