// createApp(deps): the Elysia app plus the HTTP wrapper: the edge (Host-independent URL, drain, key before body,
// body limits), one error boundary around all of it, x-request-id and one log line per request.
import { Elysia } from "elysia";
import pkg from "../package.json" with { type: "json" };
import { batchesRoutes } from "./api/batches/routes.ts";
import { chatRoutes } from "./api/chat/routes.ts";
import { completionsRoutes } from "./api/completions/routes.ts";
import { embeddingsRoutes } from "./api/embeddings/routes.ts";
import { filesRoutes } from "./api/files/routes.ts";
import { imagesRoutes } from "./api/images/routes.ts";
import { messagesErrorBody } from "./api/messages/assembler.ts";
import { messagesRoutes } from "./api/messages/routes.ts";
import { responsesRoutes } from "./api/responses/routes.ts";
import { docs } from "./api/docs/routes.ts";
import { modelsRoutes } from "./api/models/routes.ts";
import { statusRoutes } from "./api/status/routes.ts";
import { dashboardRoutes } from "./dashboard/routes.ts";
import type { AppDeps } from "./app-deps.ts";
import type { ApiError } from "./errors/api-error.ts";
import { storageFaultOf } from "./fs/storage-fault.ts";
import { type ErrorEnvelope, errorLogFields, errorResponse, specEnvelope, toApiError } from "./errors/render.ts";
import { passEdge, parsedBody, type ServerControl } from "./http/edge.ts";
import { policyTable } from "./http/edge-policy.ts";
import { attachMeta, metaOf, type RequestMeta } from "./http/request-meta.ts";
import { routeLabeler } from "./http/route-label.ts";
import type { StreamEnd } from "./http/sse-writer.ts";
import { rateLimitHeaders } from "./ratelimit/headers.ts";
import type { Logger } from "./log/logger.ts";
import { metricsRoutes } from "./metrics/routes.ts";

/** One JSON log line for an unexpected exception (the client gets the sanitized 500), or for a storage fault (a 503). */
export function crashLogger(logger: Logger, requestId: string) {
  return (e: unknown) => {
    // A full or unwritable disk is the machine's fault, not kiln's: the operator needs what failed, not a stack.
    const fault = storageFaultOf(e) !== null;
    logger.error(fault ? "storage fault" : "unhandled exception", {
      request_id: requestId,
      error: e instanceof Error ? `${e.name}: ${e.message}` : String(e),
      stack: e instanceof Error && !fault ? e.stack : undefined,
    });
  };
}

export function buildRoutes(deps: AppDeps) {
  // Handlers and validators compile at start-up, not on a route's first request (a 50 ms stall for everyone else).
  return new Elysia({ precompile: true })
    // Bodies are read and parsed by the edge (under the route's limit, after the key check); the router takes them as they are.
    .onParse({ as: "global" }, ({ request }) => parsedBody(request))
    .onError(({ code, error, request }) => {
      const meta = metaOf(request);
      return failWith(toApiError(code, error, { requestId: meta.id, logCrash: crashLogger(deps.logger, meta.id) }), meta);
    })
    .use(docs({ title: "kiln API", version: pkg.version }))
    .use(statusRoutes(deps))
    .use(modelsRoutes(deps))
    .use(chatRoutes(deps))
    .use(completionsRoutes(deps))
    .use(embeddingsRoutes(deps))
    .use(responsesRoutes(deps))
    .use(messagesRoutes(deps))
    .use(filesRoutes(deps))
    .use(batchesRoutes(deps))
    .use(imagesRoutes(deps))
    .use(metricsRoutes(deps))
    .use(dashboardRoutes(deps));
}

/** Each family renders every error on its routes (auth, schema, invalid JSON, overload…) in its own envelope. */
const ENVELOPES: [prefix: string, envelope: ErrorEnvelope][] = [["/v1/messages", messagesErrorBody]];

export function envelopeFor(path: string | null): ErrorEnvelope {
  const hit = path ? ENVELOPES.find(([prefix]) => path === prefix || path.startsWith(`${prefix}/`)) : undefined;
  return hit ? hit[1] : specEnvelope;
}

/** The error answer in the route's envelope; the error is kept on the request for its log line. */
function failWith(err: ApiError | null, meta: RequestMeta): Response {
  if (err) meta.error = err;
  return errorResponse(err, meta.id, envelopeFor(meta.path));
}

export interface Kiln {
  routes: ReturnType<typeof buildRoutes>;
  /** Serves one request: what Bun.serve calls (with its server), and what tests call. */
  handle(request: Request, server?: ServerControl): Promise<Response>;
  /** Requests whose handler has not returned yet (a stream counts until its response starts). */
  inflight(): number;
  /** Streamed answers still being written (a drain lets their last frame out before closing connections). */
  openStreams(): number;
}

function withHeaders(response: Response, headers: Record<string, string>): Response {
  try {
    for (const [k, v] of Object.entries(headers)) response.headers.set(k, v);
    return response;
  } catch {
    // Some responses have immutable headers: copy them into a new response.
    const copy = new Response(response.body, response);
    for (const [k, v] of Object.entries(headers)) copy.headers.set(k, v);
    return copy;
  }
}

/**
 * A long-running route ran with the connection's idle timeout lifted: it comes back once the answer is complete,
 * at the end of a stream (exempt while it sends) or now for a plain answer, so a kept-alive connection still idles out.
 */
function idleAgainAfter(response: Response, restore: () => void): Response {
  if (!response.body || !response.headers.get("content-type")?.includes("text/event-stream")) {
    restore();
    return response;
  }
  const body = response.body.pipeThrough(new TransformStream<Uint8Array, Uint8Array>({ flush: restore }));
  return new Response(body, response);
}

export function createApp(deps: AppDeps): Kiln {
  const routes = buildRoutes(deps);
  const edge = { ...deps, policyFor: policyTable(routes.routes) };
  const routeOf = routeLabeler(routes.routes);
  let inflight = 0;
  let openStreams = 0;
  const handle = async (raw: Request, server?: ServerControl): Promise<Response> => {
    const meta = attachMeta(raw);
    meta.peer = server?.requestIP?.(raw)?.address ?? null;
    inflight++;
    let response: Response;
    try {
      const passed = await passEdge(raw, meta, edge, server);
      if (passed.kind === "refuse") response = failWith(passed.error, meta);
      else {
        attachMeta(passed.request, meta);
        response = await routes.handle(passed.request);
        if (passed.policy?.longRunning && server) response = idleAgainAfter(response, () => server.timeout(raw, deps.config.idleTimeoutS));
      }
    } catch (e) {
      response = failWith(toApiError("UNKNOWN", e, { requestId: meta.id, logCrash: crashLogger(deps.logger, meta.id) }), meta);
    } finally {
      inflight--;
      deps.gate.leave(meta.id);
    }
    // Every keyed answer says where the team stands against its limits (as admission left them).
    const extra: Record<string, string> = meta.rateLimit ? rateLimitHeaders(meta.rateLimit) : {};
    if (!response.headers.has("x-request-id")) extra["x-request-id"] = meta.id;
    // While draining, every answer tells the client to reconnect (to this instance's successor).
    if (deps.shutdown.draining) extra.connection = "close";
    if (Object.keys(extra).length) response = withHeaders(response, extra);
    // One log line and one metrics observation per request, when its answer is complete.
    const done = (stream?: StreamEnd) => {
      const ms = performance.now() - meta.startedAt;
      deps.metrics.observeRequest({ method: raw.method, route: routeOf(raw.method, meta.path), status: response.status, team: meta.teamId === null ? "" : String(meta.teamId), seconds: ms / 1000 });
      deps.logger.info("request", {
        method: raw.method, path: meta.path, status: response.status, duration_ms: Math.round(ms * 10) / 10, team_id: meta.teamId, request_id: meta.id,
        ...(meta.error && response.status >= 400 ? errorLogFields(meta.error, envelopeFor(meta.path)) : {}),
        ...(stream ? { stream: stream.outcome, ...(stream.outcome === "error" ? { error_code: stream.code } : {}) } : {}),
      });
    };
    // A stream's line waits for its real end: how it ended and its whole duration, not its first byte.
    if (meta.streamEnd && response.headers.get("content-type")?.startsWith("text/event-stream")) {
      openStreams++;
      void meta.streamEnd.then((end) => {
        openStreams--;
        done(end);
      });
    } else done();
    return response;
  };
  return { routes, handle, inflight: () => inflight, openStreams: () => openStreams };
}
