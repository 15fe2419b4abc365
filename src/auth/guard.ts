// Elysia derive hook for keyed routes: the key the edge already checked (or, for a request that bypassed the
// edge, a check now), with the team recorded on the request.
import type { Db } from "../db/client.ts";
import { metaOf } from "../http/request-meta.ts";
import { authenticate, type AuthContext } from "./authenticate.ts";

export function authDerive(db: Db) {
  return ({ request }: { request: Request }): { auth: AuthContext } => {
    const meta = metaOf(request);
    const auth = meta.auth ?? authenticate(db, request.headers);
    meta.teamId = auth.teamId;
    meta.keyId = auth.keyId;
    meta.auth = auth;
    return { auth };
  };
}
