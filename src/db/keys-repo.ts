// API keys: created with a fresh secret (returned once), looked up by id, revoked in place.
import { and, eq, isNull, sql } from "drizzle-orm";
import { formatKey, generateSecret, hashSecret } from "../auth/api-key.ts";
import type { Db, PgDb, PgTables, SqliteDb, Tables } from "./client.ts";
import { preparedFirst } from "./prepared.ts";

export type ApiKeyRow = Tables["apiKeys"]["$inferSelect"];
type TeamRow = Tables["teams"]["$inferSelect"];

export interface CreatedKey {
  id: number;
  teamId: number;
  name: string;
  /** The full key text; shown once, never stored. */
  key: string;
}

/** A new key's row and its secret (which only the returned key text carries). */
function newKey(teamId: number, name: string) {
  const secret = generateSecret();
  return { secret, values: { teamId, name, secretHash: hashSecret(secret), hint: secret.slice(-4) } };
}

export async function createKey(db: Db, teamId: number, name: string): Promise<CreatedKey> {
  const { secret, values } = newKey(teamId, name);
  const [row] = await db.q.insert(db.t.apiKeys).values(values).returning({ id: db.t.apiKeys.id });
  return { id: row!.id, teamId, name, key: formatKey(row!.id, secret) };
}

/** createKey inside a SQLite transaction's synchronous body (see client.ts). */
export function insertKey(tx: Pick<SqliteDb, "insert">, t: Tables, teamId: number, name: string): CreatedKey {
  const { secret, values } = newKey(teamId, name);
  const row = tx.insert(t.apiKeys).values(values).returning({ id: t.apiKeys.id }).get();
  return { id: row.id, teamId, name, key: formatKey(row.id, secret) };
}

/** createKey inside a Postgres transaction's body. */
export async function insertKeyPg(tx: Pick<PgDb, "insert">, t: PgTables, teamId: number, name: string): Promise<CreatedKey> {
  const { secret, values } = newKey(teamId, name);
  const [row] = await tx.insert(t.apiKeys).values(values).returning({ id: t.apiKeys.id });
  return { id: row!.id, teamId, name, key: formatKey(row!.id, secret) };
}

export async function findActiveKey(db: Db, id: number): Promise<ApiKeyRow | undefined> {
  const { apiKeys } = db.t;
  const [key] = await db.q.select().from(apiKeys).where(and(eq(apiKeys.id, id), isNull(apiKeys.revokedAt))).limit(1);
  return key;
}

const keyWithTeam = preparedFirst("kiln_key_with_team", (q, { apiKeys, teams }) =>
  q.select({ key: apiKeys, team: teams }).from(apiKeys).innerJoin(teams, eq(apiKeys.teamId, teams.id))
    .where(and(eq(apiKeys.id, sql.placeholder("id")), isNull(apiKeys.revokedAt))),
);

/** An active key with its team, in one read: what every keyed request is checked against (a prepared statement). */
export async function findActiveKeyWithTeam(db: Db, id: number): Promise<{ key: ApiKeyRow; team: TeamRow } | undefined> {
  return keyWithTeam(db, { id });
}

/** Sets a key's restrictions (null = none); false when there is no such active key. */
export async function restrictKey(db: Db, id: number, r: { models?: string[] | null; endpoints?: string[] | null }): Promise<boolean> {
  const { apiKeys } = db.t;
  const set: Partial<ApiKeyRow> = {};
  if (r.models !== undefined) set.allowedModels = r.models && JSON.stringify(r.models);
  if (r.endpoints !== undefined) set.allowedEndpoints = r.endpoints && JSON.stringify(r.endpoints);
  if (!Object.keys(set).length) return !!(await findActiveKey(db, id));
  return (await db.q.update(apiKeys).set(set).where(and(eq(apiKeys.id, id), isNull(apiKeys.revokedAt))).returning({ id: apiKeys.id })).length > 0;
}

/** Marks the key revoked; returns false when there is no such active key (one conditional statement: racing revokes agree). */
export async function revokeKey(db: Db, id: number): Promise<boolean> {
  const { apiKeys } = db.t;
  const res = await db.q
    .update(apiKeys)
    .set({ revokedAt: Math.floor(Date.now() / 1000) })
    .where(and(eq(apiKeys.id, id), isNull(apiKeys.revokedAt)))
    .returning({ id: apiKeys.id });
  return res.length > 0;
}

export async function listKeys(db: Db) {
  const { apiKeys, teams } = db.t;
  return await db.q
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
    .orderBy(apiKeys.id);
}

export async function touchKey(db: Db, id: number, nowS: number): Promise<void> {
  const { apiKeys } = db.t;
  await db.q.update(apiKeys).set({ lastUsedAt: nowS }).where(eq(apiKeys.id, id));
}

/** A team's active keys, oldest first (what its API keys tab lists). */
export async function activeTeamKeys(db: Db, teamId: number): Promise<ApiKeyRow[]> {
  const { apiKeys } = db.t;
  return await db.q.select().from(apiKeys).where(and(eq(apiKeys.teamId, teamId), isNull(apiKeys.revokedAt))).orderBy(apiKeys.id);
}

/** An active key of this team; undefined for another team's key (a dashboard URL naming it is a 404). */
export async function findActiveTeamKey(db: Db, teamId: number, id: number): Promise<ApiKeyRow | undefined> {
  const { apiKeys } = db.t;
  const [key] = await db.q.select().from(apiKeys).where(and(eq(apiKeys.id, id), eq(apiKeys.teamId, teamId), isNull(apiKeys.revokedAt))).limit(1);
  return key;
}
