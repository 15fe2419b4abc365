// Stored Responses: the response row, its input items and its stream events. Every read and delete is scoped to the
// owning team, so another team's id reads exactly like an unknown one. Expired rows read as gone before the sweep runs.
import { and, asc, desc, eq, gt, inArray, lt, sql } from "drizzle-orm";
import type { Db, SqliteDb } from "./client.ts";
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
export async function insertResponse(db: Db, row: NewResponseRow, items: StoredItem[], reasoningIds: readonly string[] = []): Promise<void> {
  db.transaction((tx) => {
    tx.insert(responses).values(row).run();
    if (items.length) {
      tx.insert(responseInputItems)
        .values(items.map((it, position) => ({ responseId: row.id, position, itemId: it.itemId, itemJson: JSON.stringify(it.item) })))
        .run();
    }
    indexReasoningNow(db, row.id, reasoningIds);
  });
}

/** Records that the response produced these reasoning items (an id already recorded is left as it is). */
export async function indexReasoning(db: Db, responseId: string, itemIds: readonly string[]): Promise<void> {
  indexReasoningNow(db, responseId, itemIds);
}

// The statements below run inside transactions' synchronous bodies (SQLite: see client.ts), and on every stored
// stream's step: cached statements of the SQLite connection, which take part in the transaction open on it.

function indexReasoningNow(db: SqliteDb, responseId: string, itemIds: readonly string[]): void {
  if (!itemIds.length) return;
  const q = db.$client.query("INSERT OR IGNORE INTO response_reasoning_items (item_id, response_id) VALUES (?, ?)");
  for (const id of itemIds) q.run(id, responseId);
}

function appendEventNow(db: SqliteDb, responseId: string, sequence: number, eventJson: string): void {
  db.$client.query("INSERT INTO response_events (response_id, sequence, event_json) VALUES (?, ?, ?)").run(responseId, sequence, eventJson);
}

function updateResponseNow(db: SqliteDb, id: string, set: ResponseUpdate, reasoningIds: readonly string[]): void {
  db.$client
    .query("UPDATE responses SET status = ?, response_json = ?, stored_bytes = coalesce(?, stored_bytes), attempts = coalesce(?, attempts), updated_at = ? WHERE id = ?")
    .run(set.status, set.responseJson, set.storedBytes ?? null, set.attempts ?? null, nowS(), id);
  indexReasoningNow(db, id, reasoningIds);
}

function lastSequenceNow(db: SqliteDb, responseId: string): number {
  const r = db.$client.query("SELECT max(sequence) AS max FROM response_events WHERE response_id = ?").get(responseId) as { max: number | null } | null;
  return r?.max ?? -1;
}

/** For each of these reasoning item ids that one of the team's live responses produced: that response's id, model and JSON. */
export async function reasoningOrigins(db: Db, teamId: number, itemIds: readonly string[], now = nowS()): Promise<{ itemId: string; responseId: string; model: string; responseJson: string }[]> {
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
export async function findResponse(db: Db, id: string, teamId: number, now = nowS()): Promise<ResponseRow | undefined> {
  const [row] = await db
    .select()
    .from(responses)
    .where(and(eq(responses.id, id), eq(responses.teamId, teamId), gt(responses.expiresAt, now)))
    .limit(1);
  return row;
}

/** A response with the key that made it, for the dashboard's page of one response. */
export async function findResponseWithKey(db: Db, id: string, teamId: number, now = nowS()): Promise<{ row: ResponseRow; key: ResponseKeyLabel } | undefined> {
  const [r] = await db
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
  const r = responses;
  const found = await db
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
  const rows = await db
    .select({ status: responses.status, n: sql<number>`count(*)` })
    .from(responses)
    .where(and(eq(responses.teamId, teamId), gt(responses.expiresAt, now)))
    .groupBy(responses.status);
  return Object.fromEntries(rows.map((r) => [r.status, r.n]));
}

export async function responseExists(db: Db, id: string): Promise<boolean> {
  return db.$client.query("SELECT 1 FROM responses WHERE id = ?").get(id) !== null;
}

/** What a rewrite of the response row sets (storedBytes and attempts: unchanged when absent). */
export interface ResponseUpdate {
  status: string;
  responseJson: string;
  storedBytes?: number;
  attempts?: number;
}

/**
 * Rewrites the response row; `reasoningIds` are reasoning items it has produced so far (see indexReasoning). A
 * stored stream saves at every finished item, so this is one cached statement rather than a query built each time.
 */
export async function updateResponse(db: Db, id: string, set: ResponseUpdate, reasoningIds: readonly string[] = []): Promise<void> {
  updateResponseNow(db, id, set, reasoningIds);
}

/** One write of a stored stream: an event appended, or the response row rewritten. */
export type StreamWrite =
  | { kind: "event"; responseId: string; sequence: number; json: string }
  | { kind: "row"; responseId: string; set: ResponseUpdate; reasoningIds: readonly string[] };

/**
 * A stored stream's writes, in order, in one transaction: all of them or none. Once per generation step: the
 * connection's own transaction (drizzle's builds a transaction object, with a query builder per table, each time).
 */
export async function writeStream(db: Db, writes: readonly StreamWrite[]): Promise<void> {
  if (!writes.length) return;
  db.$client.transaction(() => {
    for (const w of writes) {
      if (w.kind === "event") appendEventNow(db, w.responseId, w.sequence, w.json);
      else updateResponseNow(db, w.responseId, w.set, w.reasoningIds);
    }
  })();
}

/**
 * Ends a stored response nothing is running any more: its closing event, numbered after the last one stored, and the
 * row, in one transaction. `end` builds both from the sequence number the event gets.
 */
export async function endResponse(db: Db, id: string, end: (sequence: number) => { eventJson: string; set: ResponseUpdate }): Promise<void> {
  db.transaction(() => {
    const sequence = lastSequenceNow(db, id) + 1;
    const { eventJson, set } = end(sequence);
    appendEventNow(db, id, sequence, eventJson);
    updateResponseNow(db, id, set, []);
  });
}

/** Marks a response failed without touching its JSON (one recovery could not read). */
export async function markFailed(db: Db, id: string): Promise<void> {
  await db.update(responses).set({ status: "failed", updatedAt: nowS() }).where(eq(responses.id, id));
}

/** Deletes the team's response with its items and events (cascade); false when there was none. */
export async function deleteResponse(db: Db, id: string, teamId: number, now = nowS()): Promise<boolean> {
  return db.$client.query("DELETE FROM responses WHERE id = ? AND team_id = ? AND expires_at > ?").run(id, teamId, now).changes > 0;
}

export async function inputItems(db: Db, responseId: string): Promise<StoredItem[]> {
  const rows = await db
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
  const t = responseInputItems;
  let cursor: number | null = null;
  if (o.after) {
    const [at] = await db.select({ position: t.position }).from(t).where(and(eq(t.responseId, responseId), eq(t.itemId, o.after))).limit(1);
    if (!at) return null;
    cursor = at.position;
  }
  const rows = await db
    .select()
    .from(t)
    .where(and(eq(t.responseId, responseId), cursor === null ? undefined : o.order === "asc" ? gt(t.position, cursor) : lt(t.position, cursor)))
    .orderBy(o.order === "asc" ? asc(t.position) : desc(t.position))
    .limit(o.limit + 1);
  return { items: rows.slice(0, o.limit).map((r) => ({ itemId: r.itemId, item: JSON.parse(r.itemJson) })), hasMore: rows.length > o.limit };
}

/** Appends one stream event; sequence numbers are the primary key, so a replayed number fails loudly. */
export async function appendEvent(db: Db, responseId: string, sequence: number, eventJson: string): Promise<void> {
  appendEventNow(db, responseId, sequence, eventJson);
}

/** The stored events after `sequence`, in order, as their JSON text. */
export async function eventsAfter(db: Db, responseId: string, sequence: number): Promise<{ sequence: number; json: string }[]> {
  return await db
    .select({ sequence: responseEvents.sequence, json: responseEvents.eventJson })
    .from(responseEvents)
    .where(and(eq(responseEvents.responseId, responseId), gt(responseEvents.sequence, sequence)))
    .orderBy(asc(responseEvents.sequence));
}

export async function lastSequence(db: Db, responseId: string): Promise<number> {
  const [r] = await db
    .select({ max: sql<number | null>`max(${responseEvents.sequence})` })
    .from(responseEvents)
    .where(eq(responseEvents.responseId, responseId));
  return r?.max ?? -1;
}

/** Responses a crash or shutdown left queued or in progress (background jobs and stored streams alike). */
export async function unfinishedResponses(db: Db): Promise<ResponseRow[]> {
  return await db
    .select()
    .from(responses)
    .where(inArray(responses.status, ["queued", "in_progress"]))
    .orderBy(asc(responses.createdAt));
}

/** Deletes up to `batch` responses whose retention ended (items and events go with them); returns how many. */
export async function sweepExpired(db: Db, now = nowS(), batch = 500): Promise<number> {
  return db.$client.query("DELETE FROM responses WHERE id IN (SELECT id FROM responses WHERE expires_at <= ? LIMIT ?)").run(now, batch).changes;
}
