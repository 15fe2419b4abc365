// Incidents shown on the status page; managed from the CLI and the dashboard's Status tab.
import { and, desc, eq, isNotNull, isNull } from "drizzle-orm";
import type { Db, Tables } from "./client.ts";

export type Incident = Tables["incidents"]["$inferSelect"];
export const INCIDENT_STATUSES = ["investigating", "identified", "monitoring", "resolved"] as const;
export const IMPACTS = ["degraded", "outage"] as const;

export async function addIncident(
  db: Db,
  input: { title: string; message?: string | null; status?: string; impact?: string },
): Promise<Incident> {
  const { incidents } = db.t;
  const [incident] = await db.q
    .insert(incidents)
    .values({
      title: input.title,
      message: input.message ?? null,
      status: input.status ?? "investigating",
      impact: input.impact ?? "degraded",
    })
    .returning();
  return incident!;
}

export async function resolveIncident(db: Db, id: number, message?: string): Promise<Incident | undefined> {
  const { incidents } = db.t;
  const now = Math.floor(Date.now() / 1000);
  const [incident] = await db.q
    .update(incidents)
    .set({ status: "resolved", resolvedAt: now, updatedAt: now, ...(message ? { message } : {}) })
    .where(eq(incidents.id, id))
    .returning();
  return incident;
}

/** Most recent first. */
export async function recentIncidents(db: Db, limit = 20): Promise<Incident[]> {
  const { incidents } = db.t;
  return await db.q.select().from(incidents).orderBy(desc(incidents.createdAt), desc(incidents.id)).limit(limit);
}

/** Every open incident, most recent first: the dashboard lists them all, however many newer ones were resolved. */
export async function openIncidents(db: Db): Promise<Incident[]> {
  const { incidents } = db.t;
  return await db.q.select().from(incidents).where(isNull(incidents.resolvedAt)).orderBy(desc(incidents.createdAt), desc(incidents.id));
}

/** Resolved incidents, most recently resolved first. */
export async function resolvedIncidents(db: Db, limit = 20): Promise<Incident[]> {
  const { incidents } = db.t;
  return await db.q.select().from(incidents).where(isNotNull(incidents.resolvedAt)).orderBy(desc(incidents.resolvedAt), desc(incidents.id)).limit(limit);
}

export async function findIncident(db: Db, id: number): Promise<Incident | undefined> {
  const { incidents } = db.t;
  const [incident] = await db.q.select().from(incidents).where(eq(incidents.id, id)).limit(1);
  return incident;
}

/**
 * A new status and message for an open incident; undefined when there is no such open incident. Resolving is
 * resolveIncident's alone, so resolved_at is set in one place and never by an update.
 */
export async function updateIncident(db: Db, id: number, input: { status: string; message: string | null }): Promise<Incident | undefined> {
  const { incidents } = db.t;
  if (input.status === "resolved") throw new Error("an incident is resolved with resolveIncident, which records when");
  const now = Math.floor(Date.now() / 1000);
  const [incident] = await db.q
    .update(incidents)
    .set({ status: input.status, message: input.message, updatedAt: now })
    .where(and(eq(incidents.id, id), isNull(incidents.resolvedAt)))
    .returning();
  return incident;
}
