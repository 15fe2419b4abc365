// Stored Responses: the response row, its input items and its stream events. Every read and delete is scoped to the
// owning team, so another team's id reads exactly like an unknown one. Expired rows read as gone before the sweep runs.
import { and, asc, desc, eq, gt, inArray, lt, sql } from "drizzle-orm";
import type { Db } from "./client.ts";
import { apiKeys, responseEvents, responseInputItems, responses } from "./schema.ts";

export type ResponseRow = typeof responses.$inferSelect;
export type NewResponseRow = typeof responses.$inferInsert;

export const TERMINAL = new Set<string>(["completed", "incomplete", "failed", "cancelled"]);

export interface StoredItem {
  itemId: string;
  item: Record<string, unknown>;
}

const nowS = () => Math.floor(Date.now() / 1000);

/** Writes the response, its input items and the ids of the reasoning it produced, in one transaction. */
export function insertResponse(db: Db, row: NewResponseRow, items: StoredItem[], reasoningIds: readonly string[] = []): void {
  db.transaction((tx) => {
    tx.insert(responses).values(row).run();
    if (items.length) {
      tx.insert(responseInputItems)
        .values(items.map((it, position) => ({ responseId: row.id, position, itemId: it.itemId, itemJson: JSON.stringify(it.item) })))
        .run();
    }
    indexReasoning(db, row.id, reasoningIds);
  });
}

/** Records that the response produced these reasoning items (an id already recorded is left as it is). */
export function indexReasoning(db: Db, responseId: string, itemIds: readonly string[]): void {
  if (!itemIds.length) return;
  const q = db.$client.query("INSERT OR IGNORE INTO response_reasoning_items (item_id, response_id) VALUES (?, ?)");
  for (const id of itemIds) q.run(id, responseId);
}

/** For each of these reasoning item ids that one of the team's live responses produced: that response's id, model and JSON. */
export function reasoningOrigins(db: Db, teamId: number, itemIds: readonly string[], now = nowS()): { itemId: string; responseId: string; model: string; responseJson: string }[] {
  if (!itemIds.length) return [];
  return db.$client
    .query(
      `SELECT i.item_id AS itemId, r.id AS responseId, r.model AS model, r.response_json AS responseJson
       FROM response_reasoning_items i JOIN responses r ON r.id = i.response_id
       WHERE i.item_id IN (SELECT value FROM json_each(?)) AND r.team_id = ? AND r.expires_at > ?`,
    )
    .all(JSON.stringify(itemIds), teamId, now) as { itemId: string; responseId: string; model: string; responseJson: string }[];
}

/** The team's live (unexpired) response, or undefined. */
export function findResponse(db: Db, id: string, teamId: number, now = nowS()): ResponseRow | undefined {
  return db
    .select()
    .from(responses)
    .where(and(eq(responses.id, id), eq(responses.teamId, teamId), gt(responses.expiresAt, now)))
    .get();
}

/** A response with the key that made it, for the dashboard's page of one response. */
export function findResponseWithKey(db: Db, id: string, teamId: number, now = nowS()): { row: ResponseRow; key: ResponseKeyLabel } | undefined {
  const r = db
    .select({ row: responses, keyName: apiKeys.name, keyHint: apiKeys.hint, keyRevokedAt: apiKeys.revokedAt })
    .from(responses)
    .innerJoin(apiKeys, eq(apiKeys.id, responses.keyId))
    .where(and(eq(responses.id, id), eq(responses.teamId, teamId), gt(responses.expiresAt, now)))
    .get();
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
export function listTeamResponses(db: Db, teamId: number, q: ResponseListQuery, now = nowS()): { rows: ResponseListRow[]; hasMore: boolean } {
  const r = responses;
  const found = db
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
    .limit(q.limit + 1)
    .all();
  const rows = found.slice(0, q.limit).map((f) => ({
    id: f.id, model: f.model, status: f.status, background: f.background, createdAt: f.createdAt, updatedAt: f.updatedAt,
    key: { id: f.keyId, name: f.keyName, hint: f.keyHint, revoked: f.keyRevokedAt !== null },
  }));
  return { rows, hasMore: found.length > q.limit };
}

/** How many unexpired responses the team has in each status. */
export function countTeamResponses(db: Db, teamId: number, now = nowS()): Record<string, number> {
  const rows = db
    .select({ status: responses.status, n: sql<number>`count(*)` })
    .from(responses)
    .where(and(eq(responses.teamId, teamId), gt(responses.expiresAt, now)))
    .groupBy(responses.status)
    .all();
  return Object.fromEntries(rows.map((r) => [r.status, r.n]));
}

export function responseExists(db: Db, id: string): boolean {
  return db.$client.query("SELECT 1 FROM responses WHERE id = ?").get(id) !== null;
}

/**
 * Rewrites the response row; `reasoningIds` are reasoning items it has produced so far (see indexReasoning). A
 * stored stream saves at every finished item, so this is one cached statement rather than a query built each time.
 */
export function updateResponse(db: Db, id: string, set: { status: string; responseJson: string; storedBytes?: number; attempts?: number }, reasoningIds: readonly string[] = []): void {
  db.$client
    .query("UPDATE responses SET status = ?, response_json = ?, stored_bytes = coalesce(?, stored_bytes), attempts = coalesce(?, attempts), updated_at = ? WHERE id = ?")
    .run(set.status, set.responseJson, set.storedBytes ?? null, set.attempts ?? null, nowS(), id);
  indexReasoning(db, id, reasoningIds);
}

/** Deletes the team's response with its items and events (cascade); false when there was none. */
export function deleteResponse(db: Db, id: string, teamId: number, now = nowS()): boolean {
  return db.$client.query("DELETE FROM responses WHERE id = ? AND team_id = ? AND expires_at > ?").run(id, teamId, now).changes > 0;
}

export function inputItems(db: Db, responseId: string): StoredItem[] {
  return db
    .select()
    .from(responseInputItems)
    .where(eq(responseInputItems.responseId, responseId))
    .orderBy(asc(responseInputItems.position))
    .all()
    .map((r) => ({ itemId: r.itemId, item: JSON.parse(r.itemJson) }));
}

export interface ItemPage {
  items: StoredItem[];
  hasMore: boolean;
}

/**
 * One page of input items in `order`, starting after the item `after` (an item id of this response). An `after`
 * that names no item of the response is null (the caller answers 404 for it).
 */
export function pageInputItems(db: Db, responseId: string, o: { order: "asc" | "desc"; after: string | null; limit: number }): ItemPage | null {
  const t = responseInputItems;
  let cursor: number | null = null;
  if (o.after) {
    const at = db.select({ position: t.position }).from(t).where(and(eq(t.responseId, responseId), eq(t.itemId, o.after))).get();
    if (!at) return null;
    cursor = at.position;
  }
  const rows = db
    .select()
    .from(t)
    .where(and(eq(t.responseId, responseId), cursor === null ? undefined : o.order === "asc" ? gt(t.position, cursor) : lt(t.position, cursor)))
    .orderBy(o.order === "asc" ? asc(t.position) : desc(t.position))
    .limit(o.limit + 1)
    .all();
  return { items: rows.slice(0, o.limit).map((r) => ({ itemId: r.itemId, item: JSON.parse(r.itemJson) })), hasMore: rows.length > o.limit };
}

/** Appends one stream event; sequence numbers are the primary key, so a replayed number fails loudly. */
export function appendEvent(db: Db, responseId: string, sequence: number, eventJson: string): void {
  db.$client.query("INSERT INTO response_events (response_id, sequence, event_json) VALUES (?, ?, ?)").run(responseId, sequence, eventJson);
}

/** The stored events after `sequence`, in order, as their JSON text. */
export function eventsAfter(db: Db, responseId: string, sequence: number): { sequence: number; json: string }[] {
  return db
    .select({ sequence: responseEvents.sequence, json: responseEvents.eventJson })
    .from(responseEvents)
    .where(and(eq(responseEvents.responseId, responseId), gt(responseEvents.sequence, sequence)))
    .orderBy(asc(responseEvents.sequence))
    .all();
}

export function lastSequence(db: Db, responseId: string): number {
  const r = db
    .select({ max: sql<number | null>`max(${responseEvents.sequence})` })
    .from(responseEvents)
    .where(eq(responseEvents.responseId, responseId))
    .get();
  return r?.max ?? -1;
}

/** Responses a crash or shutdown left queued or in progress (background jobs and stored streams alike). */
export function unfinishedResponses(db: Db): ResponseRow[] {
  return db
    .select()
    .from(responses)
    .where(inArray(responses.status, ["queued", "in_progress"]))
    .orderBy(asc(responses.createdAt))
    .all();
}

/** Deletes up to `batch` responses whose retention ended (items and events go with them); returns how many. */
export function sweepExpired(db: Db, now = nowS(), batch = 500): number {
  return db.$client.query("DELETE FROM responses WHERE id IN (SELECT id FROM responses WHERE expires_at <= ? LIMIT ?)").run(now, batch).changes;
}
