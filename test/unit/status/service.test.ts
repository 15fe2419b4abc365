import { describe, expect, test } from "bun:test";
import { buildStatus } from "../../../src/api/status/service.ts";
import type { Incident } from "../../../src/db/incidents-repo.ts";

const ok = { status: "operational" as const, message: null };
const inc = (over: Partial<Incident>): Incident => ({
  id: 1, title: "Slow", status: "investigating", message: null, impact: "degraded",
  createdAt: 1_700_000_000, updatedAt: 1_700_000_100, resolvedAt: null, ...over,
});

describe("buildStatus", () => {
  test("all good", () => {
    const s = buildStatus({ draining: false, incidents: [], models: [{ id: "m-1", health: ok }], healthChangedAt: null });
    expect(s).toEqual({
      is_alive: true, service_status: "operational", service_message: "All systems operational.", updated_at: null,
      incident_history: [], model_statuses: [{ id: "m-1", status: "operational", message: null }],
    });
  });

  test("an open incident degrades; an outage incident is an outage; a resolved one only shows in history", () => {
    const models = [{ id: "m-1", health: ok }];
    expect(buildStatus({ draining: false, incidents: [inc({})], models, healthChangedAt: null }).service_status).toBe("degraded");
    expect(buildStatus({ draining: false, incidents: [inc({ impact: "outage" })], models, healthChangedAt: null }).service_status).toBe("outage");
    const resolved = buildStatus({ draining: false, incidents: [inc({ resolvedAt: 1_700_000_200, status: "resolved" })], models, healthChangedAt: null });
    expect(resolved.service_status).toBe("operational");
    expect(resolved.incident_history).toEqual([{ date: "2023-11-14T22:13:20.000Z", title: "Slow", status: "resolved", message: null }]);
    expect(resolved.updated_at).toBe("2023-11-14T22:15:00.000Z");
  });

  test("a degraded model degrades the service; all models down is an outage; draining is not alive", () => {
    const bad = { status: "outage" as const, message: "worker crashed" };
    const one = buildStatus({ draining: false, incidents: [], models: [{ id: "a-1", health: bad }, { id: "b-1", health: ok }], healthChangedAt: 5 });
    expect(one.service_status).toBe("degraded");
    expect(one.service_message).toBe("a-1 is outage: worker crashed");
    expect(buildStatus({ draining: false, incidents: [], models: [{ id: "a-1", health: bad }], healthChangedAt: 5 }).service_status).toBe("outage");
    const draining = buildStatus({ draining: true, incidents: [], models: [{ id: "a-1", health: ok }], healthChangedAt: null });
    expect(draining.is_alive).toBe(false);
    expect(draining.service_status).toBe("degraded");
  });

  test("a storage fault that blocks requests is an outage and not alive; one that does not only degrades", () => {
    const models = [{ id: "m-1", health: ok }];
    const full = buildStatus({ draining: false, incidents: [], models, healthChangedAt: null, storage: { blocking: true, message: "The server's disk is full." } });
    expect([full.is_alive, full.service_status, full.service_message]).toEqual([false, "outage", "The server's disk is full."]);
    const journal = buildStatus({ draining: false, incidents: [], models, healthChangedAt: null, storage: { blocking: false, message: "The server's disk is full." } });
    expect([journal.is_alive, journal.service_status]).toEqual([true, "degraded"]);
  });
});
