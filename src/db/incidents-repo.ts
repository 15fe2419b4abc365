// Incidents shown on the status page; managed from the CLI and the dashboard's Status tab.
import { and, desc, eq, isNotNull, isNull } from "drizzle-orm";
import type { Db } from "./client.ts";
import { incidents } from "./schema.ts";

export type Incident = typeof incidents.$inferSelect;
export const INCIDENT_STATUSES = ["investigating", "identified", "monitoring", "resolved"] as const;
export const IMPACTS = ["degraded", "outage"] as const;

export function addIncident(
  db: Db,
  input: { title: string; message?: string | null; status?: string; impact?: string },
): Incident {
  return db
    .insert(incidents)
    .values({
      title: input.title,
      message: input.message ?? null,
      status: input.status ?? "investigating",
      impact: input.impact ?? "degraded",
    })
    .returning()
    .get();
}

export function resolveIncident(db: Db, id: number, message?: string): Incident | undefined {
  const now = Math.floor(Date.now() / 1000);
  return db
    .update(incidents)
    .set({ status: "resolved", resolvedAt: now, updatedAt: now, ...(message ? { message } : {}) })
    .where(eq(incidents.id, id))
    .returning()
    .get();
}

/** Most recent first. */
export function recentIncidents(db: Db, limit = 20): Incident[] {
  return db.select().from(incidents).orderBy(desc(incidents.createdAt), desc(incidents.id)).limit(limit).all();
}

/** Every open incident, most recent first: the dashboard lists them all, however many newer ones were resolved. */
export function openIncidents(db: Db): Incident[] {
  return db.select().from(incidents).where(isNull(incidents.resolvedAt)).orderBy(desc(incidents.createdAt), desc(incidents.id)).all();
}

/** Resolved incidents, most recently resolved first. */
export function resolvedIncidents(db: Db, limit = 20): Incident[] {
  return db.select().from(incidents).where(isNotNull(incidents.resolvedAt)).orderBy(desc(incidents.resolvedAt), desc(incidents.id)).limit(limit).all();
}

export function findIncident(db: Db, id: number): Incident | undefined {
  return db.select().from(incidents).where(eq(incidents.id, id)).get();
}

/**
 * A new status and message for an open incident; undefined when there is no such open incident. Resolving is
 * resolveIncident's alone, so resolved_at is set in one place and never by an update.
 */
export function updateIncident(db: Db, id: number, input: { status: string; message: string | null }): Incident | undefined {
  if (input.status === "resolved") throw new Error("an incident is resolved with resolveIncident, which records when");
  const now = Math.floor(Date.now() / 1000);
  return db
    .update(incidents)
    .set({ status: input.status, message: input.message, updatedAt: now })
    .where(and(eq(incidents.id, id), isNull(incidents.resolvedAt)))
    .returning()
    .get();
}
