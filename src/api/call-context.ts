// What a route hands its service about one call, the same for every family: who asks, the request's id, the client's
// connection, and where a streamed answer says how it really ended.
import type { AuthContext } from "../auth/authenticate.ts";
import type { StreamEnd } from "../http/sse-writer.ts";

export interface CallContext {
  auth: AuthContext;
  requestId: string;
  /** The client's connection: its leaving stops the run. */
  signal: AbortSignal;
  /** Told how a streamed answer really ended, once it has (for the request's log line). */
  onStreamEnd?: (end: StreamEnd) => void;
}
