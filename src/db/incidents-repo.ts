// Incidents shown on the status page; managed from the CLI.
import { desc, eq } from "drizzle-orm";
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
