// What a route hands its service about one call, the same for every family: who asks, the request's id, the client's
// connection, and where a streamed answer says how it really ended.
import type { AuthContext } from "../auth/authenticate.ts";
import { metaOf, watchStream } from "../http/request-meta.ts";
import type { StreamEnd } from "../http/sse-writer.ts";
import type { RequestScope } from "../inference/admitted-run.ts";
import type { ServiceTier } from "../inference/service-tier.ts";

export interface CallContext {
  auth: AuthContext;
  requestId: string;
  /** The client's connection: its leaving stops the run. */
  signal: AbortSignal;
  /** Told how a streamed answer really ended, once it has (for the request's log line). */
  onStreamEnd?: (end: StreamEnd) => void;
  /** The lane the caller runs it in (a batch line's runner sets "batch"); absent: the request's own service_tier decides. */
  tier?: ServiceTier;
  /** The batch the call is a line of (set by the batch runner): its usage row names it. */
  batchId?: string;
}

/** The run's scope for a call through one endpoint family; `requested`: the lane the body's service_tier asks for (the caller's wins). */
export function callScope(call: CallContext, endpoint: string, requested?: ServiceTier): RequestScope {
  const tier = call.tier ?? requested;
  // Absent means default: a default run's scope is the same as before lanes.
  return {
    requestId: call.requestId, teamId: call.auth.teamId, keyId: call.auth.keyId, endpoint,
    ...(tier && tier !== "default" ? { tier } : {}), ...(call.batchId ? { batchId: call.batchId } : {}),
  };
}

/** The context of a call whose answer may be a stream: its log line waits for how the stream ended. */
export function streamingCall(auth: AuthContext, request: Request): CallContext {
  const meta = metaOf(request);
  return { auth, requestId: meta.id, signal: request.signal, onStreamEnd: watchStream(meta) };
}
