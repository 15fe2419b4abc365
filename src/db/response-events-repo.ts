// A stored response's stream: its events, the rewrites of its row that go with them, and the reasoning items it
// produced. On SQLite these are cached statements of the connection (every stored stream's step runs them); on
// Postgres, drizzle's builders in transactions of their own.
import { and, asc, eq, gt, inArray, or, sql } from "drizzle-orm";
import type { Db, PgDb, PgHandle, PgTables, SqliteDb } from "./client.ts";

const UNFINISHED = ["queued", "in_progress"];

/**
 * Which claim of a response its runner writes under (response-leases-repo.ts). On Postgres a write naming a fence is
 * made only while the row still names that owner and epoch, checked by the statement that locks the row; on SQLite one
 * process runs everything and the fence is not needed.
 */
export interface Fence {
  owner: string;
  epoch: number;
}

/** A fenced write refused: another replica claimed these responses, and their runner here must stop. */
export class LeaseLost extends Error {
  constructor(readonly responseIds: readonly string[]) {
    super(`stored response ${responseIds.join(", ")} was taken over by another replica; this runner's writes are refused`);
    this.name = "LeaseLost";
  }
}

/** What a rewrite of the response row sets (storedBytes and attempts: unchanged when absent). */
export interface ResponseUpdate {
  status: string;
  responseJson: string;
  storedBytes?: number;
  attempts?: number;
}

/** One write of a stored stream: an event appended, or the response row rewritten. */
export type StreamWrite =
  | { kind: "event"; responseId: string; sequence: number; json: string; fence?: Fence | null }
  | { kind: "row"; responseId: string; set: ResponseUpdate; reasoningIds: readonly string[]; fence?: Fence | null };

const nowS = () => Math.floor(Date.now() / 1000);

// SQLite: these run inside transactions' synchronous bodies (see client.ts), and on every stored stream's step: cached
// statements of the connection, which take part in the transaction open on it.

export function indexReasoningLite(db: SqliteDb, responseId: string, itemIds: readonly string[]): void {
  if (!itemIds.length) return;
  const q = db.$client.query("INSERT OR IGNORE INTO response_reasoning_items (item_id, response_id) VALUES (?, ?)");
  for (const id of itemIds) q.run(id, responseId);
}

function appendEventLite(db: SqliteDb, responseId: string, sequence: number, eventJson: string): void {
  db.$client.query("INSERT INTO response_events (response_id, sequence, event_json) VALUES (?, ?, ?)").run(responseId, sequence, eventJson);
}

function updateResponseLite(db: SqliteDb, id: string, set: ResponseUpdate, reasoningIds: readonly string[]): void {
  db.$client
    .query("UPDATE responses SET status = ?, response_json = ?, stored_bytes = coalesce(?, stored_bytes), attempts = coalesce(?, attempts), updated_at = ? WHERE id = ?")
    .run(set.status, set.responseJson, set.storedBytes ?? null, set.attempts ?? null, nowS(), id);
  indexReasoningLite(db, id, reasoningIds);
}

function lastSequenceLite(db: SqliteDb, responseId: string): number {
  const r = db.$client.query("SELECT max(sequence) AS max FROM response_events WHERE response_id = ?").get(responseId) as { max: number | null } | null;
  return r?.max ?? -1;
}

// Postgres: the same writes, awaited, inside the caller's transaction (or on the pool).

type PgTx = Pick<PgDb, "insert" | "update" | "select">;

export async function indexReasoningPg(tx: PgTx, t: PgTables, responseId: string, itemIds: readonly string[]): Promise<void> {
  if (!itemIds.length) return;
  await tx.insert(t.responseReasoningItems).values(itemIds.map((itemId) => ({ itemId, responseId }))).onConflictDoNothing();
}

async function updateResponsePg(tx: PgTx, t: PgTables, id: string, set: ResponseUpdate, reasoningIds: readonly string[], fence?: Fence | null): Promise<void> {
  await tx
    .update(t.responses)
    .set({
      status: set.status, responseJson: set.responseJson, updatedAt: nowS(),
      ...(set.storedBytes === undefined ? {} : { storedBytes: set.storedBytes }), ...(set.attempts === undefined ? {} : { attempts: set.attempts }),
    })
    .where(and(eq(t.responses.id, id), fence ? fenced(t, fence) : undefined));
  await indexReasoningPg(tx, t, id, reasoningIds);
}

const fenced = (t: PgTables, f: Fence) => and(eq(t.responses.leaseOwner, f.owner), eq(t.responses.leaseEpoch, f.epoch));

/**
 * Locks (FOR SHARE, in id order) the rows of the fenced responses a batch writes, if they still name the fence's owner
 * and epoch: a claim waits for the batch, and skips a row it cannot lock. Throws LeaseLost naming the others.
 */
async function checkFences(tx: PgTx, t: PgTables, writes: readonly StreamWrite[]): Promise<void> {
  const fences = new Map<string, Fence>();
  for (const w of writes) if (w.fence && !fences.has(w.responseId)) fences.set(w.responseId, w.fence);
  if (!fences.size) return;
  const r = t.responses;
  const held = await tx
    .select({ id: r.id })
    .from(r)
    .where(and(inArray(r.id, [...fences.keys()]), or(...[...fences].map(([id, f]) => and(eq(r.id, id), fenced(t, f))))))
    .orderBy(asc(r.id))
    .for("share");
  const ok = new Set(held.map((h) => h.id));
  const lost = [...fences.keys()].filter((id) => !ok.has(id));
  if (lost.length) throw new LeaseLost(lost);
}

async function appendEventPg(tx: PgTx, t: PgTables, responseId: string, sequence: number, eventJson: string): Promise<void> {
  await tx.insert(t.responseEvents).values({ responseId, sequence, eventJson });
}

/** For each of these reasoning item ids that one of the team's live responses produced: that response's id, model and JSON. */
export async function reasoningOrigins(db: Db, teamId: number, itemIds: readonly string[], now = nowS()): Promise<{ itemId: string; responseId: string; model: string; responseJson: string }[]> {
  if (!itemIds.length) return [];
  if (db.dialect === "sqlite") {
    return db.lite.$client
      .query(
        `SELECT i.item_id AS itemId, r.id AS responseId, r.model AS model, r.response_json AS responseJson
         FROM response_reasoning_items i JOIN responses r ON r.id = i.response_id
         WHERE i.item_id IN (SELECT value FROM json_each(?)) AND r.team_id = ? AND r.expires_at > ?`,
      )
      .all(JSON.stringify(itemIds), teamId, now) as { itemId: string; responseId: string; model: string; responseJson: string }[];
  }
  const { responseReasoningItems: i, responses: r } = db.pt;
  // The ids as one JSON parameter, as on SQLite: a request may send back more ids than a statement takes parameters.
  return await db.pg
    .select({ itemId: i.itemId, responseId: r.id, model: r.model, responseJson: r.responseJson })
    .from(i)
    .innerJoin(r, eq(r.id, i.responseId))
    .where(and(sql`${i.itemId} IN (SELECT jsonb_array_elements_text(${JSON.stringify(itemIds)}::text::jsonb))`, eq(r.teamId, teamId), gt(r.expiresAt, now)));
}

/**
 * Rewrites the response row; `reasoningIds` are reasoning items it has produced so far (an id already recorded is left as it is). A
 * stored stream saves at every finished item, so on SQLite this is one cached statement rather than a query built each time.
 */
export async function updateResponse(db: Db, id: string, set: ResponseUpdate, reasoningIds: readonly string[] = []): Promise<void> {
  if (db.dialect === "sqlite") return updateResponseLite(db.lite, id, set, reasoningIds);
  const { pg, pt } = db;
  if (!reasoningIds.length) return updateResponsePg(pg, pt, id, set, reasoningIds);
  await pg.transaction(async (tx) => updateResponsePg(tx, pt, id, set, reasoningIds));
}

/**
 * A stored stream's writes, in order, in one transaction: all of them or none. Once per generation step: on SQLite the
 * connection's own transaction (drizzle's builds a transaction object, with a query builder per table, each time).
 */
export async function writeStream(db: Db, writes: readonly StreamWrite[]): Promise<void> {
  if (!writes.length) return;
  if (db.dialect === "sqlite") {
    const lite = db.lite;
    lite.$client.transaction(() => {
      for (const w of writes) {
        if (w.kind === "event") appendEventLite(lite, w.responseId, w.sequence, w.json);
        else updateResponseLite(lite, w.responseId, w.set, w.reasoningIds);
      }
    })();
    return;
  }
  const { pg, pt } = db;
  await pg.transaction(async (tx) => {
    await checkFences(tx, pt, writes);
    for (const w of writes) {
      if (w.kind === "event") await appendEventPg(tx, pt, w.responseId, w.sequence, w.json);
      else await updateResponsePg(tx, pt, w.responseId, w.set, w.reasoningIds, w.fence);
    }
  });
}

/**
 * Ends a stored response nothing is running any more: its closing event, numbered after the last one stored, and the
 * row, in one transaction. `end` builds both from the sequence number the event gets. A response already ended is left
 * as it is (false): a stored response has one closing event. With a fence (Postgres), one claimed since by another
 * replica throws LeaseLost.
 */
export async function endResponse(db: Db, id: string, end: (sequence: number) => { eventJson: string; set: ResponseUpdate }, fence?: Fence | null): Promise<boolean> {
  if (db.dialect === "sqlite") {
    const lite = db.lite;
    return lite.transaction(() => {
      const row = lite.$client.query("SELECT status FROM responses WHERE id = ?").get(id) as { status: string } | null;
      if (!row || !UNFINISHED.includes(row.status)) return false;
      const sequence = lastSequenceLite(lite, id) + 1;
      const { eventJson, set } = end(sequence);
      appendEventLite(lite, id, sequence, eventJson);
      updateResponseLite(lite, id, set, []);
      return true;
    });
  }
  return await endResponsePg(db, id, end, fence);
}

async function endResponsePg(db: PgHandle, id: string, end: (sequence: number) => { eventJson: string; set: ResponseUpdate }, fence?: Fence | null): Promise<boolean> {
  const { pg, pt } = db;
  return await pg.transaction(async (tx) => {
    const r = pt.responses;
    // The row locked first: another ending of the same response waits, then finds it ended.
    const [row] = await tx.select({ status: r.status, owner: r.leaseOwner, epoch: r.leaseEpoch }).from(r).where(eq(r.id, id)).for("update");
    if (!row || !UNFINISHED.includes(row.status)) return false;
    if (fence && (row.owner !== fence.owner || row.epoch !== fence.epoch)) throw new LeaseLost([id]);
    const [last] = await tx.select({ max: sql<number | null>`max(${pt.responseEvents.sequence})` }).from(pt.responseEvents).where(eq(pt.responseEvents.responseId, id));
    const sequence = (last?.max ?? -1) + 1;
    const { eventJson, set } = end(sequence);
    await appendEventPg(tx, pt, id, sequence, eventJson);
    await updateResponsePg(tx, pt, id, set, []);
    return true;
  });
}

/** Appends one stream event; sequence numbers are the primary key, so a replayed number fails loudly. */
export async function appendEvent(db: Db, responseId: string, sequence: number, eventJson: string): Promise<void> {
  if (db.dialect === "sqlite") appendEventLite(db.lite, responseId, sequence, eventJson);
  else await appendEventPg(db.pg, db.pt, responseId, sequence, eventJson);
}

/** The stored events after `sequence`, in order, as their JSON text. */
export async function eventsAfter(db: Db, responseId: string, sequence: number): Promise<{ sequence: number; json: string }[]> {
  const { responseEvents } = db.t;
  return await db.q
    .select({ sequence: responseEvents.sequence, json: responseEvents.eventJson })
    .from(responseEvents)
    .where(and(eq(responseEvents.responseId, responseId), gt(responseEvents.sequence, sequence)))
    .orderBy(asc(responseEvents.sequence));
}

export async function lastSequence(db: Db, responseId: string): Promise<number> {
  const { responseEvents } = db.t;
  const [r] = await db.q
    .select({ max: sql<number | null>`max(${responseEvents.sequence})` })
    .from(responseEvents)
    .where(eq(responseEvents.responseId, responseId));
  return r?.max ?? -1;
}
