// The edge every request passes before the router: a Host-independent URL, the drain check, the key from the
// headers, then the body read under its route's limit and parsed with a depth check. Whatever it refuses costs
// kiln a header parse and, for a keyed route without a valid key, one database lookup.
import type { Gate } from "../access/gate.ts";
import type { Db } from "../db/client.ts";
import { authenticate } from "../auth/authenticate.ts";
import { ApiError, clip } from "../errors/api-error.ts";
import { pumpBody } from "./body-reader.ts";
import type { EdgePolicy, PolicyLookup } from "./edge-policy.ts";
import { JsonBodyParser } from "./json-depth.ts";
import type { RequestMeta } from "./request-meta.ts";
import { internalUrl } from "./request-target.ts";

/** Deeper JSON than this is refused before parsing (tool schemas rarely pass 10 levels). */
export const MAX_JSON_DEPTH = 64;
/** Bodies from this size on are parsed in a turn of the event loop of their own. */
const LARGE_BODY = 256 * 1024;

export interface EdgeDeps {
  db: Db;
  gate: Pick<Gate, "enter" | "checkModel">;
  policyFor: PolicyLookup;
  config: { maxBodyBytes: number; bodyTimeoutMs: number; idleTimeoutS: number };
  shutdown: { draining: boolean };
}

/** The part of Bun's server the HTTP layer uses: lifting the idle timeout of one request, and the peer's address. */
export interface ServerControl {
  timeout(request: Request, seconds: number): void;
  requestIP?(request: Request): { address: string } | null;
}

export type EdgeResult =
  | { kind: "route"; request: Request; policy: EdgePolicy | null }
  /** Answer without routing: null is the spec's empty 404. */
  | { kind: "refuse"; error: ApiError | null; policy: EdgePolicy | null };

const bodies = new WeakMap<Request, unknown>();
const streams = new WeakMap<Request, ReadableStream<Uint8Array> | null>();

/** The body the edge parsed for this (rebuilt) request; throws if the edge did not read it (a route without a policy). */
export function parsedBody(request: Request): unknown {
  if (!bodies.has(request)) throw new Error("request body reached the router without an edge policy");
  return bodies.get(request);
}

/** The unread body of a request whose route streams it (policy body "stream"); throws for any other request. */
export function streamedBody(request: Request): ReadableStream<Uint8Array> | null {
  if (!streams.has(request)) throw new Error("a streamed body was asked of a request whose edge policy does not stream it");
  return streams.get(request) ?? null;
}

function isJsonType(contentType: string | null): boolean {
  if (contentType === null) return true;
  const type = contentType.split(";")[0]!.trim().toLowerCase();
  return type === "application/json" || (type.startsWith("application/") && type.endsWith("+json"));
}

/** How the edge takes this request's body: a "form" route's multipart body is streamed, any other is JSON. */
function bodyHandling(policy: EdgePolicy | null, contentType: string | null): "none" | "json" | "stream" {
  if (!policy) return "none";
  if (policy.body !== "form") return policy.body;
  return contentType?.split(";")[0]!.trim().toLowerCase() === "multipart/form-data" ? "stream" : "json";
}

/** A "form" route's multipart body, unread (its stream, null when it sent none); null when the body came as JSON (parsedBody has it). */
export function formBody(request: Request): { stream: ReadableStream<Uint8Array> | null } | null {
  return streams.has(request) ? { stream: streams.get(request) ?? null } : null;
}

export async function passEdge(raw: Request, meta: RequestMeta, deps: EdgeDeps, server?: ServerControl): Promise<EdgeResult> {
  const target = internalUrl(raw.url);
  meta.path = target?.path ?? null;
  if (!target) return { kind: "refuse", error: null, policy: null };
  const policy = deps.policyFor(raw.method, target.path);
  if (deps.shutdown.draining && !policy?.drainExempt) return { kind: "refuse", error: ApiError.shuttingDown(), policy };
  if (policy?.auth) {
    const auth = await authenticate(deps.db, raw.headers);
    meta.teamId = auth.teamId;
    meta.keyId = auth.keyId;
    meta.auth = auth;
    meta.rateLimit = {};
    // Permissions, a lapsed billing account and the team's RPM: before any byte of the body is read.
    await deps.gate.enter({ requestId: meta.id, auth, path: target.path, snapshot: meta.rateLimit });
  }
  const init: RequestInit = { method: raw.method, headers: raw.headers, signal: raw.signal };
  let body: unknown;
  const read = bodyHandling(policy, raw.headers.get("content-type"));
  if (read === "json") {
    const type = raw.headers.get("content-type");
    if (!isJsonType(type)) {
      throw ApiError.badRequest(`The request body must be JSON, sent with Content-Type: application/json (got '${clip(type ?? "", 80)}').`);
    }
    // The body deadline governs the read (a 408 the client can see), not the connection's idle timeout; a refused
    // body gets the idle timeout back, so a client that keeps the connection after its 413 or 400 is not held forever.
    server?.timeout(raw, 0);
    try {
      const parser = new JsonBodyParser(MAX_JSON_DEPTH);
      const size = await pumpBody(raw, { maxBytes: deps.config.maxBodyBytes, timeoutMs: deps.config.bodyTimeoutMs }, (chunk) => parser.push(chunk));
      body = parser.finish();
      // Every JSON family names its model at the top level: checked here once, for the families to come as well.
      const model = (body as { model?: unknown } | null)?.model;
      if (meta.auth && typeof model === "string") deps.gate.checkModel(meta.auth, model);
      meta.bodyBytes = size;
      // Parsing a large body took a few milliseconds: let waiting requests in before validation and the route run.
      if (size >= LARGE_BODY) await new Promise<void>((resolve) => setImmediate(resolve));
    } catch (e) {
      server?.timeout(raw, deps.config.idleTimeoutS);
      throw e;
    }
    // The router runs its parse hook only when a body is present; the hook hands over `body` as parsed here, so a
    // two-byte stand-in saves copying a large body into the rebuilt request.
    init.body = "{}";
    // A long-running route keeps the timeout lifted (it has its own limits; streams may pause); others get it back.
    if (!policy!.longRunning) server?.timeout(raw, deps.config.idleTimeoutS);
  }
  // A long-running route without a body (following a background response) may wait long between writes; one that
  // streams its body is bounded by its own body deadline instead (a large upload, then its fsync).
  if (policy?.longRunning && read !== "json") server?.timeout(raw, 0);
  const request = new Request(target.url, init);
  // The router never sees a streamed body (the rebuilt request has none, so nothing parses it): the route takes it.
  if (read === "stream") streams.set(request, raw.body);
  // A route without a body (GET, DELETE, a body-less POST) parses to null, whatever the client sent.
  if (policy) bodies.set(request, read === "json" ? body : null);
  return { kind: "route", request, policy };
}
