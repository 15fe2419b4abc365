// Per-request facts shared by the HTTP wrapper (logging, x-request-id) and the routes (auth, usage rows).
import type { AuthContext } from "../auth/authenticate.ts";
import type { ApiError } from "../errors/api-error.ts";
import type { LimitSnapshot } from "../ratelimit/headers.ts";
import { newRequestId } from "./request-id.ts";
import type { StreamEnd } from "./sse-writer.ts";

export interface RequestMeta {
  id: string;
  startedAt: number;
  /** The request path as routed (null when the request target was not a path). */
  path: string | null;
  teamId: number | null;
  keyId: number | null;
  /** The client's socket address (Bun's `server.requestIP`), for the /metrics loopback check; null without a socket. */
  peer?: string | null;
  /** Set by the edge once the key was checked, so the route does not check it again. */
  auth?: AuthContext;
  /** The team's rate-limit state as this request saw it (the gate fills it; the answer carries it as headers). */
  rateLimit?: LimitSnapshot;
  /** Bytes of the JSON body as received (before parsing), for limits that depend on its content. */
  bodyBytes?: number;
  /** The error the answer carries (the wrapper sets it when it renders one), for the request's log line. */
  error?: ApiError;
  /** For a streamed answer: settles when the stream really ended (for the request's log line). */
  streamEnd?: Promise<StreamEnd>;
}

/** Makes `meta.streamEnd` and returns what settles it; a family's stream calls it when it closes. */
export function watchStream(meta: RequestMeta): (end: StreamEnd) => void {
  let settle!: (end: StreamEnd) => void;
  meta.streamEnd = new Promise<StreamEnd>((resolve) => (settle = resolve));
  return settle;
}

const metas = new WeakMap<Request, RequestMeta>();

export function attachMeta(request: Request, meta?: RequestMeta): RequestMeta {
  const m: RequestMeta = meta ?? { id: newRequestId(), startedAt: performance.now(), path: null, teamId: null, keyId: null };
  metas.set(request, m);
  return m;
}

/** The request's meta; a request that bypassed the wrapper gets one on first use. */
export function metaOf(request: Request): RequestMeta {
  return metas.get(request) ?? attachMeta(request);
}
