import { describe, expect, test } from "bun:test";
import { statusCommand } from "../../src/cli/admin.ts";
import { fakeManifest, writeFakeModel } from "../helpers/fake-model.ts";
import { tempDir, testKiln } from "../helpers/kiln.ts";

describe("GET /v1/status", async () => {
  const models = tempDir();
  writeFakeModel(models, "m", fakeManifest("status-model-v1"));
  const k = await testKiln({ modelsDir: models });

  test("operational with every field", async () => {
    const res = await k.req("/v1/status", { key: null });
    expect(res.headers.get("content-type")).toContain("application/json");
    expect((await res.json()) as any).toEqual({
      is_alive: true,
      service_status: "operational",
      service_message: "All systems operational.",
      updated_at: null,
      incident_history: [],
      model_statuses: [{ id: "status-model-v1", status: "operational", message: null }],
    });
  });

  test("an incident opened and resolved from the CLI shows up", async () => {
    const out: string[] = [];
    expect(await statusCommand(k.deps.db, ["incident", "add", "Slow", "responses", "--message", "Queue is long"], (l) => out.push(l))).toBe(0);
    let body: any = await (await k.req("/v1/status", { key: null })).json();
    expect(body.service_status).toBe("degraded");
    expect(body.service_message).toBe("Slow responses: Queue is long");
    expect(body.incident_history).toHaveLength(1);
    expect(body.incident_history[0]).toMatchObject({ title: "Slow responses", status: "investigating", message: "Queue is long" });
    expect(new Date(body.incident_history[0].date).getTime()).toBeGreaterThan(0);
    expect(body.updated_at).not.toBeNull();

    const id = out[0]!.match(/incident (\d+)/)![1]!;
    expect(await statusCommand(k.deps.db, ["incident", "resolve", id], () => {})).toBe(0);
    body = await (await k.req("/v1/status", { key: null })).json();
    expect(body.service_status).toBe("operational");
    expect(body.incident_history[0].status).toBe("resolved");
  });

  test("a model's health shows in model_statuses and degrades the service", async () => {
    k.deps.registry.setHealth("status-model-v1", "degraded", "worker_hung");
    const body: any = await (await k.req("/v1/status", { key: null })).json();
    expect(body.model_statuses).toEqual([{ id: "status-model-v1", status: "degraded", message: "a worker stopped responding" }]);
    expect(body.service_status).toBe("degraded");
    k.deps.registry.setHealth("status-model-v1", "operational");
  });
});
