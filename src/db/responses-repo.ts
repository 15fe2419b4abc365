// Stored Responses: the response row and its input items (its stream: response-events-repo.ts). Every read and delete
// is scoped to the owning team, so another team's id reads exactly like an unknown one. Expired rows read as gone
// before the sweep runs.
import { and, asc, desc, eq, gt, inArray, lt, lte, sql } from "drizzle-orm";
import type { Db, Tables } from "./client.ts";
import { dbDeadline } from "./db-clock.ts";
import { indexReasoningLite, indexReasoningPg } from "./response-events-repo.ts";

export type ResponseRow = Tables["responses"]["$inferSelect"];
export type NewResponseRow = Tables["responses"]["$inferInsert"];

export const TERMINAL = new Set<string>(["completed", "incomplete", "failed", "cancelled"]);

export interface StoredItem {
  itemId: string;
  item: Record<string, unknown>;
}

const nowS = () => Math.floor(Date.now() / 1000);

/**
 * Writes the response, its input items and the ids of the reasoning it produced, in one transaction. `leaseMs`: the
 * row's lease (its owner is the row's lease_owner) lasts that long past now on the database's clock.
 */
export async function insertResponse(db: Db, input: NewResponseRow, items: StoredItem[], reasoningIds: readonly string[] = [], leaseMs: number | null = null): Promise<void> {
  const row = leaseMs === null ? input : { ...input, leaseUntil: dbDeadline(db, leaseMs) };
  const itemRows = items.map((it, position) => ({ responseId: row.id, position, itemId: it.itemId, itemJson: JSON.stringify(it.item) }));
  if (db.dialect === "sqlite") {
    const { lite, t } = db;
    lite.transaction((tx) => {
      tx.insert(t.responses).values(row).run();
      if (itemRows.length) tx.insert(t.responseInputItems).values(itemRows).run();
      indexReasoningLite(lite, row.id, reasoningIds);
    });
    return;
  }
  const { pg, pt } = db;
  await pg.transaction(async (tx) => {
    await tx.insert(pt.responses).values(row);
    if (itemRows.length) await tx.insert(pt.responseInputItems).values(itemRows);
    await indexReasoningPg(tx, pt, row.id, reasoningIds);
  });
}

/** The team's live (unexpired) response, or undefined. */
export async function findResponse(db: Db, id: string, teamId: number, now = nowS()): Promise<ResponseRow | undefined> {
  const { responses } = db.t;
  const [row] = await db.q
    .select()
    .from(responses)
    .where(and(eq(responses.id, id), eq(responses.teamId, teamId), gt(responses.expiresAt, now)))
    .limit(1);
  return row;
}

/** A response with the key that made it, for the dashboard's page of one response. */
export async function findResponseWithKey(db: Db, id: string, teamId: number, now = nowS()): Promise<{ row: ResponseRow; key: ResponseKeyLabel } | undefined> {
  const { responses, apiKeys } = db.t;
  const [r] = await db.q
    .select({ row: responses, keyName: apiKeys.name, keyHint: apiKeys.hint, keyRevokedAt: apiKeys.revokedAt })
    .from(responses)
    .innerJoin(apiKeys, eq(apiKeys.id, responses.keyId))
    .where(and(eq(responses.id, id), eq(responses.teamId, teamId), gt(responses.expiresAt, now)))
    .limit(1);
  return r && { row: r.row, key: { id: r.row.keyId, name: r.keyName, hint: r.keyHint, revoked: r.keyRevokedAt !== null } };
}

export interface ResponseKeyLabel {
  id: number;
  name: string;
  /** The key's last four characters. */
  hint: string;
  revoked: boolean;
}

/** One line of a team's list of responses: what the list shows, never the request or response JSON. */
export interface ResponseListRow {
  id: string;
  model: string;
  status: string;
  background: boolean;
  createdAt: number;
  updatedAt: number;
  key: ResponseKeyLabel;
}

/** Where a page of the list starts: after this response, in newest-first order. */
export interface ResponseCursor {
  createdAt: number;
  id: string;
}

export interface ResponseListQuery {
  status?: string | null;
  backgroundOnly?: boolean;
  before?: ResponseCursor | null;
  limit: number;
}

/**
 * A team's unexpired responses, newest first (ties by id), after `before` when given: keyset paging, so a page
 * costs the same however deep it is and a response stored meanwhile does not shift the pages after it.
 */
export async function listTeamResponses(db: Db, teamId: number, q: ResponseListQuery, now = nowS()): Promise<{ rows: ResponseListRow[]; hasMore: boolean }> {
  const { responses: r, apiKeys } = db.t;
  const found = await db.q
    .select({
      id: r.id, model: r.model, status: r.status, background: r.background, createdAt: r.createdAt, updatedAt: r.updatedAt,
      keyId: r.keyId, keyName: apiKeys.name, keyHint: apiKeys.hint, keyRevokedAt: apiKeys.revokedAt,
    })
    .from(r)
    .innerJoin(apiKeys, eq(apiKeys.id, r.keyId))
    .where(
      and(
        eq(r.teamId, teamId),
        gt(r.expiresAt, now),
        q.status ? eq(r.status, q.status) : undefined,
        q.backgroundOnly ? eq(r.background, true) : undefined,
        q.before ? sql`(${r.createdAt}, ${r.id}) < (${q.before.createdAt}, ${q.before.id})` : undefined,
      ),
    )
    .orderBy(desc(r.createdAt), desc(r.id))
    .limit(q.limit + 1);
  const rows = found.slice(0, q.limit).map((f) => ({
    id: f.id, model: f.model, status: f.status, background: f.background, createdAt: f.createdAt, updatedAt: f.updatedAt,
    key: { id: f.keyId, name: f.keyName, hint: f.keyHint, revoked: f.keyRevokedAt !== null },
  }));
  return { rows, hasMore: found.length > q.limit };
}

/** How many unexpired responses the team has in each status. */
export async function countTeamResponses(db: Db, teamId: number, now = nowS()): Promise<Record<string, number>> {
  const { responses } = db.t;
  const rows = await db.q
    // Postgres's count is 64-bit, which its client reads as text.
    .select({ status: responses.status, n: sql<number>`count(*)`.mapWith(Number) })
    .from(responses)
    .where(and(eq(responses.teamId, teamId), gt(responses.expiresAt, now)))
    .groupBy(responses.status);
  return Object.fromEntries(rows.map((r) => [r.status, r.n]));
}

export async function responseExists(db: Db, id: string): Promise<boolean> {
  if (db.dialect === "sqlite") return db.lite.$client.query("SELECT 1 FROM responses WHERE id = ?").get(id) !== null;
  const { responses } = db.t;
  return (await db.q.select({ id: responses.id }).from(responses).where(eq(responses.id, id)).limit(1)).length > 0;
}

/** Marks a response failed without touching its JSON (one recovery could not read). */
export async function markFailed(db: Db, id: string): Promise<void> {
  const { responses } = db.t;
  await db.q.update(responses).set({ status: "failed", updatedAt: nowS() }).where(eq(responses.id, id));
}

/** Deletes the team's response with its items and events (cascade); false when there was none. */
export async function deleteResponse(db: Db, id: string, teamId: number, now = nowS()): Promise<boolean> {
  if (db.dialect === "sqlite") return db.lite.$client.query("DELETE FROM responses WHERE id = ? AND team_id = ? AND expires_at > ?").run(id, teamId, now).changes > 0;
  const { responses } = db.t;
  const gone = await db.q
    .delete(responses)
    .where(and(eq(responses.id, id), eq(responses.teamId, teamId), gt(responses.expiresAt, now)))
    .returning({ id: responses.id });
  return gone.length > 0;
}

export async function inputItems(db: Db, responseId: string): Promise<StoredItem[]> {
  const { responseInputItems } = db.t;
  const rows = await db.q
    .select()
    .from(responseInputItems)
    .where(eq(responseInputItems.responseId, responseId))
    .orderBy(asc(responseInputItems.position));
  return rows.map((r) => ({ itemId: r.itemId, item: JSON.parse(r.itemJson) }));
}

export interface ItemPage {
  items: StoredItem[];
  hasMore: boolean;
}

/**
 * One page of input items in `order`, starting after the item `after` (an item id of this response). An `after`
 * that names no item of the response is null (the caller answers 404 for it).
 */
export async function pageInputItems(db: Db, responseId: string, o: { order: "asc" | "desc"; after: string | null; limit: number }): Promise<ItemPage | null> {
  const t = db.t.responseInputItems;
  let cursor: number | null = null;
  if (o.after) {
    const [at] = await db.q.select({ position: t.position }).from(t).where(and(eq(t.responseId, responseId), eq(t.itemId, o.after))).limit(1);
    if (!at) return null;
    cursor = at.position;
  }
  const rows = await db.q
    .select()
    .from(t)
    .where(and(eq(t.responseId, responseId), cursor === null ? undefined : o.order === "asc" ? gt(t.position, cursor) : lt(t.position, cursor)))
    .orderBy(o.order === "asc" ? asc(t.position) : desc(t.position))
    .limit(o.limit + 1);
  return { items: rows.slice(0, o.limit).map((r) => ({ itemId: r.itemId, item: JSON.parse(r.itemJson) })), hasMore: rows.length > o.limit };
}

/** Responses a crash or shutdown left queued or in progress (background jobs and stored streams alike). */
export async function unfinishedResponses(db: Db): Promise<ResponseRow[]> {
  const { responses } = db.t;
  return await db.q
    .select()
    .from(responses)
    .where(inArray(responses.status, ["queued", "in_progress"]))
    .orderBy(asc(responses.createdAt));
}

/** Deletes up to `batch` responses whose retention ended (items and events go with them); returns how many. */
export async function sweepExpired(db: Db, now = nowS(), batch = 500): Promise<number> {
  if (db.dialect === "sqlite") return db.lite.$client.query("DELETE FROM responses WHERE id IN (SELECT id FROM responses WHERE expires_at <= ? LIMIT ?)").run(now, batch).changes;
  const { responses } = db.t;
  const expired = db.q.select({ id: responses.id }).from(responses).where(lte(responses.expiresAt, now)).limit(batch);
  return (await db.q.delete(responses).where(inArray(responses.id, expired)).returning({ id: responses.id })).length;
}
