// Resolves the presented API key to its team, or throws the spec's single 401.
import { ApiError } from "../errors/api-error.ts";
import type { Db } from "../db/client.ts";
import { type ApiKeyRow, findActiveKeyWithTeam, touchKey } from "../db/keys-repo.ts";
import type { Team } from "../db/teams-repo.ts";
import { type AccessRules, restrictionOf } from "../access/rules.ts";
import { keyFromHeaders, parseKey, secretMatches } from "./api-key.ts";

export interface AuthContext {
  keyId: number;
  teamId: number;
  /** The team's row as read for this request (tier, limit overrides, billing switch). */
  team: Team;
  /** The key's and the team's restrictions, as they are now. */
  rules: AccessRules;
}

/** A key's last-used time is written at most this often (seconds), so a busy key does not write on every request. */
export const LAST_USED_RESOLUTION_S = 60;

export async function authenticate(db: Db, headers: Headers, nowS = Math.floor(Date.now() / 1000)): Promise<AuthContext> {
  const text = keyFromHeaders(headers);
  const parsed = text ? parseKey(text) : null;
  if (!parsed) throw ApiError.unauthorized();
  const found = await findActiveKeyWithTeam(db, parsed.id);
  // Compare even when the id is unknown so both failures take the same time.
  const ok = secretMatches(parsed.secret, found?.key.secretHash ?? "0".repeat(64));
  if (!found || !ok) throw ApiError.unauthorized();
  const { key } = found;
  if (key.lastUsedAt === null || nowS - key.lastUsedAt >= LAST_USED_RESOLUTION_S) await touchKey(db, key.id, nowS);
  return authOf(found);
}

/** An active key and its team as the context a request runs under: their restrictions as they are now. */
export function authOf(found: { key: ApiKeyRow; team: Team }): AuthContext {
  const { key, team } = found;
  return { keyId: key.id, teamId: key.teamId, team, rules: { key: restrictionOf(key), team: restrictionOf(team) } };
}
