// Elysia derive hook for keyed routes: authenticates before the handler and records the team on the request.
import type { Db } from "../db/client.ts";
import { metaOf } from "../http/request-meta.ts";
import { authenticate, type AuthContext } from "./authenticate.ts";

export function authDerive(db: Db) {
  return ({ request }: { request: Request }): { auth: AuthContext } => {
    const auth = authenticate(db, request.headers);
    const meta = metaOf(request);
    meta.teamId = auth.teamId;
    meta.keyId = auth.keyId;
    return { auth };
  };
}
