// GET /v1/status: unauthenticated service health.
import { Elysia } from "elysia";
import { recentIncidents } from "../../db/incidents-repo.ts";
import type { AppDeps } from "../../app-deps.ts";
import { edgePolicies, POLICY } from "../../http/edge-policy.ts";
import { StatusResponse } from "./schema.ts";
import { buildStatus } from "./service.ts";

export function statusRoutes(deps: AppDeps) {
  return new Elysia({ name: "status" }).use(edgePolicies).get(
    "/v1/status",
    () =>
      buildStatus({
        draining: deps.lifecycle.draining,
        incidents: recentIncidents(deps.db),
        models: deps.registry.list().map((m) => ({ id: m.id, health: deps.registry.healthOf(m.id) })),
        healthChangedAt: deps.registry.healthChangedAt,
      }),
    {
      // Clients check it before retrying, a draining instance included.
      edge: POLICY.openWhileDraining,
      response: { 200: StatusResponse },
      detail: { summary: "Service health", description: "No API key required. Clients check it before retrying failed requests.", tags: ["Status"], security: [] },
    },
  );
}
