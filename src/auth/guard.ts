// Elysia derive hook for keyed routes: the key the edge checked (and the gate passed) before the router ran. A keyed
// route reached without that check (its edge policy is not keyed, or the request bypassed the edge) is a server
// fault: it answers 500 rather than authenticating here without the gate.
import { metaOf } from "../http/request-meta.ts";
import type { AuthContext } from "./authenticate.ts";

export function requireEdgeAuth({ request }: { request: Request }): { auth: AuthContext } {
  const auth = metaOf(request).auth;
  if (!auth) throw new Error(`keyed route ${request.method} ${new URL(request.url).pathname} was reached without the edge's key check (its edge policy is not keyed)`);
  return { auth };
}
