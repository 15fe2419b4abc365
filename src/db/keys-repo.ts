// API keys: created with a fresh secret (returned once), looked up by id, revoked in place.
import { and, eq, isNull, sql } from "drizzle-orm";
import { formatKey, generateSecret, hashSecret } from "../auth/api-key.ts";
import type { Db } from "./client.ts";
import { preparedFor } from "./prepared.ts";
import { apiKeys, teams } from "./schema.ts";

export type ApiKeyRow = typeof apiKeys.$inferSelect;

export interface CreatedKey {
  id: number;
  teamId: number;
  name: string;
  /** The full key text; shown once, never stored. */
  key: string;
}

export function createKey(db: Db, teamId: number, name: string): CreatedKey {
  const secret = generateSecret();
  const row = db
    .insert(apiKeys)
    .values({ teamId, name, secretHash: hashSecret(secret), hint: secret.slice(-4) })
    .returning()
    .get();
  return { id: row.id, teamId, name, key: formatKey(row.id, secret) };
}

export function findActiveKey(db: Db, id: number): ApiKeyRow | undefined {
  return db.select().from(apiKeys).where(and(eq(apiKeys.id, id), isNull(apiKeys.revokedAt))).get();
}

const keyWithTeam = preparedFor((db) =>
  db.select({ key: apiKeys, team: teams }).from(apiKeys).innerJoin(teams, eq(apiKeys.teamId, teams.id))
    .where(and(eq(apiKeys.id, sql.placeholder("id")), isNull(apiKeys.revokedAt))).prepare(),
);

/** An active key with its team, in one read: what every keyed request is checked against. */
export function findActiveKeyWithTeam(db: Db, id: number): { key: ApiKeyRow; team: typeof teams.$inferSelect } | undefined {
  return keyWithTeam(db).get({ id });
}

/** Sets a key's restrictions (null = none); false when there is no such active key. */
export function restrictKey(db: Db, id: number, r: { models?: string[] | null; endpoints?: string[] | null }): boolean {
  const set: Partial<ApiKeyRow> = {};
  if (r.models !== undefined) set.allowedModels = r.models && JSON.stringify(r.models);
  if (r.endpoints !== undefined) set.allowedEndpoints = r.endpoints && JSON.stringify(r.endpoints);
  if (!Object.keys(set).length) return !!findActiveKey(db, id);
  return db.update(apiKeys).set(set).where(and(eq(apiKeys.id, id), isNull(apiKeys.revokedAt))).returning({ id: apiKeys.id }).all().length > 0;
}

/** Marks the key revoked; returns false when there is no such active key. */
export function revokeKey(db: Db, id: number): boolean {
  const res = db
    .update(apiKeys)
    .set({ revokedAt: Math.floor(Date.now() / 1000) })
    .where(and(eq(apiKeys.id, id), isNull(apiKeys.revokedAt)))
    .returning({ id: apiKeys.id })
    .all();
  return res.length > 0;
}

export function listKeys(db: Db) {
  return db
    .select({
      id: apiKeys.id,
      name: apiKeys.name,
      team: teams.name,
      hint: apiKeys.hint,
      createdAt: apiKeys.createdAt,
      lastUsedAt: apiKeys.lastUsedAt,
      revokedAt: apiKeys.revokedAt,
      allowedModels: apiKeys.allowedModels,
      allowedEndpoints: apiKeys.allowedEndpoints,
    })
    .from(apiKeys)
    .innerJoin(teams, eq(apiKeys.teamId, teams.id))
    .orderBy(apiKeys.id)
    .all();
}

export function touchKey(db: Db, id: number, nowS: number): void {
  db.update(apiKeys).set({ lastUsedAt: nowS }).where(eq(apiKeys.id, id)).run();
}

/** A team's active keys, oldest first (what its API keys tab lists). */
export function activeTeamKeys(db: Db, teamId: number): ApiKeyRow[] {
  return db.select().from(apiKeys).where(and(eq(apiKeys.teamId, teamId), isNull(apiKeys.revokedAt))).orderBy(apiKeys.id).all();
}

/** An active key of this team; undefined for another team's key (a dashboard URL naming it is a 404). */
export function findActiveTeamKey(db: Db, teamId: number, id: number): ApiKeyRow | undefined {
  return db.select().from(apiKeys).where(and(eq(apiKeys.id, id), eq(apiKeys.teamId, teamId), isNull(apiKeys.revokedAt))).get();
}
