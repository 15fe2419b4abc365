// GET /v1/status: unauthenticated service health.
import { Elysia } from "elysia";
import type { AppDeps } from "../../app-deps.ts";
import { edgePolicies, POLICY } from "../../http/edge-policy.ts";
import { StatusResponse } from "./schema.ts";
import { currentStatus } from "./service.ts";

export function statusRoutes(deps: AppDeps) {
  return new Elysia({ name: "status" }).use(edgePolicies).get(
    "/v1/status",
    () => currentStatus(deps),
    {
      // Clients check it before retrying, a draining instance included.
      edge: POLICY.openWhileDraining,
      response: { 200: StatusResponse },
      detail: { summary: "Service health", description: "No API key required. Clients check it before retrying failed requests.", tags: ["Status"], security: [] },
    },
  );
}
