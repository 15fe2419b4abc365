// Incidents: open, update, resolve, and the lists the status page and the dashboard show; on every dialect.
import { describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import {
  addIncident, findIncident, openIncidents, recentIncidents, resolvedIncidents, resolveIncident, updateIncident,
} from "../../../src/db/incidents-repo.ts";
import { DIALECTS, type Dialect } from "../../helpers/databases.ts";

async function setup(dialect: Dialect) {
  const t = await dialect.open();
  /** Moves an incident's times into the past, so a change made now is seen to move them. */
  const age = (id: number, createdAt: number) => t.run(sql`UPDATE incidents SET created_at = ${createdAt}, updated_at = ${createdAt} WHERE id = ${id}`);
  return { ...t, age };
}

describe.each(DIALECTS)("incidents repository ($name)", (dialect) => {
  test("updateIncident changes an open incident's status and message and its updated time, never resolved_at", async () => {
    const { db, age } = await setup(dialect);
    const inc = await addIncident(db, { title: "Slow", message: "first", impact: "outage" });
    await age(inc.id, 100);
    const after = (await updateIncident(db, inc.id, { status: "monitoring", message: null }))!;
    expect(after).toMatchObject({ id: inc.id, title: "Slow", impact: "outage", status: "monitoring", message: null, createdAt: 100, resolvedAt: null });
    expect(after.updatedAt).toBeGreaterThan(100);
    expect(await findIncident(db, inc.id)).toEqual(after);
  });

  test("updateIncident leaves a resolved incident alone and refuses to resolve", async () => {
    const { db } = await setup(dialect);
    const inc = await addIncident(db, { title: "Down" });
    await expect(updateIncident(db, inc.id, { status: "resolved", message: "x" })).rejects.toThrow(/resolveIncident/);
    const resolved = (await resolveIncident(db, inc.id, "fixed"))!;
    expect(await updateIncident(db, inc.id, { status: "identified", message: "reopened?" })).toBeUndefined();
    expect(await findIncident(db, inc.id)).toEqual(resolved);
    expect(await updateIncident(db, 9999, { status: "identified", message: null })).toBeUndefined();
  });

  test("open incidents all, newest first, whatever the recent list holds; resolved ones by when they were resolved", async () => {
    const { db, age } = await setup(dialect);
    const old = await addIncident(db, { title: "old and still open" });
    await age(old.id, 100);
    for (let i = 0; i < 25; i++) await resolveIncident(db, (await addIncident(db, { title: `closed ${i}` })).id);
    const fresh = await addIncident(db, { title: "fresh" });
    expect((await recentIncidents(db)).map((i) => i.id)).not.toContain(old.id);
    expect((await openIncidents(db)).map((i) => i.title)).toEqual(["fresh", "old and still open"]);
    const resolved = await resolvedIncidents(db);
    expect(resolved).toHaveLength(20);
    expect(resolved.every((i) => i.resolvedAt !== null)).toBe(true);
    expect(resolved.map((i) => i.id)).not.toContain(fresh.id);
    expect((await resolvedIncidents(db, 3)).map((i) => i.title)).toEqual(["closed 24", "closed 23", "closed 22"]);
  });
});
