// Resolves the presented API key to its team, or throws the spec's single 401.
import { ApiError } from "../errors/api-error.ts";
import type { Db } from "../db/client.ts";
import { findActiveKey, touchKey } from "../db/keys-repo.ts";
import { keyFromHeaders, parseKey, secretMatches } from "./api-key.ts";

export interface AuthContext {
  keyId: number;
  teamId: number;
}

/** A key's last-used time is written at most this often (seconds), so a busy key does not write on every request. */
export const LAST_USED_RESOLUTION_S = 60;

export function authenticate(db: Db, headers: Headers, nowS = Math.floor(Date.now() / 1000)): AuthContext {
  const text = keyFromHeaders(headers);
  const parsed = text ? parseKey(text) : null;
  if (!parsed) throw ApiError.unauthorized();
  const row = findActiveKey(db, parsed.id);
  // Compare even when the id is unknown so both failures take the same time.
  const ok = secretMatches(parsed.secret, row?.secretHash ?? "0".repeat(64));
  if (!row || !ok) throw ApiError.unauthorized();
  if (row.lastUsedAt === null || nowS - row.lastUsedAt >= LAST_USED_RESOLUTION_S) touchKey(db, row.id, nowS);
  return { keyId: row.id, teamId: row.teamId };
}
