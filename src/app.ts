// createApp(deps): the Elysia app plus the HTTP wrapper that adds x-request-id and one log line per request.
import { Elysia } from "elysia";
import pkg from "../package.json" with { type: "json" };
import { chatRoutes } from "./api/chat/routes.ts";
import { docs } from "./api/docs/routes.ts";
import { modelsRoutes } from "./api/models/routes.ts";
import { statusRoutes } from "./api/status/routes.ts";
import type { AppDeps } from "./app-deps.ts";
import { errorResponse, toApiError } from "./errors/render.ts";
import { attachMeta, metaOf } from "./http/request-meta.ts";

export function buildRoutes(deps: AppDeps) {
  return new Elysia()
    .onError(({ code, error, request }) => {
      const meta = metaOf(request);
      const logCrash = (e: unknown) =>
        deps.logger.error("unhandled exception", {
          request_id: meta.id,
          error: e instanceof Error ? `${e.name}: ${e.message}` : String(e),
          stack: e instanceof Error ? e.stack : undefined,
        });
      return errorResponse(toApiError(code, error, { requestId: meta.id, logCrash }), meta.id);
    })
    .use(docs({ title: "kiln API", version: pkg.version }))
    .use(statusRoutes(deps))
    .use(modelsRoutes(deps))
    .use(chatRoutes(deps));
}

export interface Kiln {
  routes: ReturnType<typeof buildRoutes>;
  /** Serves one request: what Bun.serve calls, and what tests call. */
  handle(request: Request): Promise<Response>;
}

export function createApp(deps: AppDeps): Kiln {
  const routes = buildRoutes(deps);
  const handle = async (request: Request): Promise<Response> => {
    const meta = attachMeta(request);
    let response: Response;
    try {
      response = await routes.handle(request);
    } catch (e) {
      deps.logger.error("request failed outside the router", { request_id: meta.id, error: String(e) });
      response = errorResponse(toApiError("UNKNOWN", e, { requestId: meta.id, logCrash: () => {} }), meta.id);
    }
    if (!response.headers.has("x-request-id")) {
      try {
        response.headers.set("x-request-id", meta.id);
      } catch {
        // Some responses have immutable headers: copy them into a new response.
        response = new Response(response.body, response);
        response.headers.set("x-request-id", meta.id);
      }
    }
    const url = new URL(request.url);
    deps.logger.info("request", {
      method: request.method,
      path: url.pathname,
      status: response.status,
      duration_ms: Math.round((performance.now() - meta.startedAt) * 10) / 10,
      team_id: meta.teamId,
      request_id: meta.id,
    });
    return response;
  };
  return { routes, handle };
}
