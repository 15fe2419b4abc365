import { describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { openDatabase } from "../../../src/db/client.ts";
import {
  addIncident, findIncident, openIncidents, recentIncidents, resolvedIncidents, resolveIncident, updateIncident,
} from "../../../src/db/incidents-repo.ts";
import { incidents } from "../../../src/db/schema.ts";
import { tempDir } from "../../helpers/kiln.ts";

async function setup() {
  const db = await openDatabase(tempDir());
  /** Moves an incident's times into the past, so a change made now is seen to move them. */
  const age = (id: number, createdAt: number) => db.update(incidents).set({ createdAt, updatedAt: createdAt }).where(eq(incidents.id, id)).run();
  return { db, age };
}

describe("incidents repository", () => {
  test("updateIncident changes an open incident's status and message and its updated time, never resolved_at", async () => {
    const { db, age } = await setup();
    const inc = addIncident(db, { title: "Slow", message: "first", impact: "outage" });
    age(inc.id, 100);
    const after = updateIncident(db, inc.id, { status: "monitoring", message: null })!;
    expect(after).toMatchObject({ id: inc.id, title: "Slow", impact: "outage", status: "monitoring", message: null, createdAt: 100, resolvedAt: null });
    expect(after.updatedAt).toBeGreaterThan(100);
    expect(findIncident(db, inc.id)).toEqual(after);
  });

  test("updateIncident leaves a resolved incident alone and refuses to resolve", async () => {
    const { db } = await setup();
    const inc = addIncident(db, { title: "Down" });
    expect(() => updateIncident(db, inc.id, { status: "resolved", message: "x" })).toThrow(/resolveIncident/);
    const resolved = resolveIncident(db, inc.id, "fixed")!;
    expect(updateIncident(db, inc.id, { status: "identified", message: "reopened?" })).toBeUndefined();
    expect(findIncident(db, inc.id)).toEqual(resolved);
    expect(updateIncident(db, 9999, { status: "identified", message: null })).toBeUndefined();
  });

  test("open incidents all, newest first, whatever the recent list holds; resolved ones by when they were resolved", async () => {
    const { db, age } = await setup();
    const old = addIncident(db, { title: "old and still open" });
    age(old.id, 100);
    for (let i = 0; i < 25; i++) resolveIncident(db, addIncident(db, { title: `closed ${i}` }).id);
    const fresh = addIncident(db, { title: "fresh" });
    expect(recentIncidents(db).map((i) => i.id)).not.toContain(old.id);
    expect(openIncidents(db).map((i) => i.title)).toEqual(["fresh", "old and still open"]);
    const resolved = resolvedIncidents(db);
    expect(resolved).toHaveLength(20);
    expect(resolved.every((i) => i.resolvedAt !== null)).toBe(true);
    expect(resolved.map((i) => i.id)).not.toContain(fresh.id);
    expect(resolvedIncidents(db, 3).map((i) => i.title)).toEqual(["closed 24", "closed 23", "closed 22"]);
  });
});
