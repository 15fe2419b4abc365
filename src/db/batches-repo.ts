// Batches and their lines. Every read a client makes is scoped to its team; the runner's writes change a line only
// from the state it expects (a line is claimed pending → running, and ends running → done | failed), so a line whose
// run was put back or taken over is never ended twice. Pages are newest first with a keyset cursor (`after` an id).
import { and, asc, count, desc, eq, inArray, lt, sum } from "drizzle-orm";
import type { Db, Tables } from "./client.ts";
import { dbDeadline } from "./db-clock.ts";
import type { NewFileRow } from "./files-repo.ts";

export type BatchRow = Tables["batches"]["$inferSelect"];
export type NewBatchRow = Omit<Tables["batches"]["$inferInsert"], "seq" | "leaseUntil">;
export type LineStatus = "pending" | "running" | "done" | "failed";
export interface NewLine {
  line: number;
  customId: string;
  bodyJson: string;
}
export interface LineRow {
  line: number;
  customId: string;
  status: string;
  resultJson: string | null;
}

/** Statuses a batch is still being worked on in: a replica holds it under a lease. */
export const UNFINISHED = ["validating", "in_progress", "finalizing", "cancelling"];

/** A new batch, held by its creator (`row.leaseOwner`) for `leaseMs` on the database's clock. */
export async function insertBatch(db: Db, row: NewBatchRow, leaseMs: number): Promise<BatchRow> {
  const [batch] = await db.q.insert(db.t.batches).values({ ...row, leaseUntil: dbDeadline(db, leaseMs) }).returning();
  return batch!;
}

/** The team's batch, or undefined. */
export async function findBatch(db: Db, id: string, teamId: number): Promise<BatchRow | undefined> {
  const b = db.t.batches;
  const [row] = await db.q.select().from(b).where(and(eq(b.id, id), eq(b.teamId, teamId))).limit(1);
  return row;
}

/** A batch by id whatever its team (the runner's reads). */
export async function batchById(db: Db, id: string): Promise<BatchRow | undefined> {
  const b = db.t.batches;
  const [row] = await db.q.select().from(b).where(eq(b.id, id)).limit(1);
  return row;
}

/** One page of the team's batches, newest first; null when `after` names no batch of the team. */
export async function pageBatches(db: Db, teamId: number, q: { after: string | null; limit: number }): Promise<{ rows: BatchRow[]; hasMore: boolean } | null> {
  const b = db.t.batches;
  let cursor: BatchRow | undefined;
  if (q.after !== null) {
    cursor = await findBatch(db, q.after, teamId);
    if (!cursor) return null;
  }
  const rows = await db.q.select().from(b).where(and(eq(b.teamId, teamId), cursor ? lt(b.seq, cursor.seq) : undefined)).orderBy(desc(b.seq)).limit(q.limit + 1);
  return { rows: rows.slice(0, q.limit), hasMore: rows.length > q.limit };
}

/** Lines done and failed, per batch. */
export async function lineCounts(db: Db, ids: readonly string[]): Promise<Map<string, { done: number; failed: number }>> {
  const out = new Map<string, { done: number; failed: number }>(ids.map((id) => [id, { done: 0, failed: 0 }]));
  if (!ids.length) return out;
  const l = db.t.batchLines;
  const rows = await db.q
    .select({ batchId: l.batchId, status: l.status, n: count().mapWith(Number) })
    .from(l)
    .where(and(inArray(l.batchId, [...ids]), inArray(l.status, ["done", "failed"])))
    .groupBy(l.batchId, l.status);
  for (const r of rows) {
    const c = out.get(r.batchId)!;
    if (r.status === "done") c.done = r.n;
    else c.failed = r.n;
  }
  return out;
}

/** What each batch's lines have cost so far (the sum of the usage rows that name it), micro-units; 0 for none. */
export async function batchCosts(db: Db, ids: readonly string[]): Promise<Map<string, number>> {
  const out = new Map<string, number>(ids.map((id) => [id, 0]));
  if (!ids.length) return out;
  const u = db.t.usage;
  const rows = await db.q.select({ batchId: u.batchId, micros: sum(u.costMicros).mapWith(Number) }).from(u).where(inArray(u.batchId, [...ids])).groupBy(u.batchId);
  for (const r of rows) if (r.batchId) out.set(r.batchId, r.micros);
  return out;
}

/** Lines still to run or running. */
export async function openLines(db: Db, batchId: string): Promise<number> {
  const l = db.t.batchLines;
  const [r] = await db.q.select({ n: count().mapWith(Number) }).from(l).where(and(eq(l.batchId, batchId), inArray(l.status, ["pending", "running"])));
  return r?.n ?? 0;
}

/** Lines are written this many at a time (SQLite's bound on a statement's parameters). */
const INSERT_CHUNK = 500;

/**
 * A validated batch: its lines are written and it goes in_progress, in one transaction, unless it left validating
 * meanwhile (a cancel): false then, and nothing is written.
 */
export async function startBatch(db: Db, id: string, lines: readonly NewLine[], nowS: number): Promise<boolean> {
  const set = { status: "in_progress", total: lines.length, inProgressAt: nowS };
  const rows = lines.map((l) => ({ batchId: id, ...l }));
  if (db.dialect === "sqlite") {
    const { t } = db;
    return db.lite.transaction((tx) => {
      const moved = tx.update(t.batches).set(set).where(and(eq(t.batches.id, id), eq(t.batches.status, "validating"))).returning({ id: t.batches.id }).all();
      if (!moved.length) return false;
      for (let i = 0; i < rows.length; i += INSERT_CHUNK) tx.insert(t.batchLines).values(rows.slice(i, i + INSERT_CHUNK)).run();
      return true;
    });
  }
  const { pt } = db;
  return db.pg.transaction(async (tx) => {
    const moved = await tx.update(pt.batches).set(set).where(and(eq(pt.batches.id, id), eq(pt.batches.status, "validating"))).returning({ id: pt.batches.id });
    if (!moved.length) return false;
    for (let i = 0; i < rows.length; i += INSERT_CHUNK) await tx.insert(pt.batchLines).values(rows.slice(i, i + INSERT_CHUNK));
    return true;
  });
}

/** Moves a batch from one of `from` to `status`, stamping `at`; false when it was in none of them. */
export async function moveBatch(db: Db, id: string, from: readonly string[], to: Partial<NewBatchRow> & { status: string }): Promise<boolean> {
  const b = db.t.batches;
  const rows = await db.q.update(b).set(to).where(and(eq(b.id, id), inArray(b.status, [...from]))).returning({ id: b.id });
  return rows.length > 0;
}

/** Claims up to `n` pending lines (lowest first) as running. */
export async function claimLines(db: Db, batchId: string, n: number): Promise<(NewLine & { line: number })[]> {
  const l = db.t.batchLines;
  const next = db.q.select({ line: l.line }).from(l).where(and(eq(l.batchId, batchId), eq(l.status, "pending"))).orderBy(asc(l.line)).limit(n);
  const rows = await db.q
    .update(l)
    .set({ status: "running" })
    .where(and(eq(l.batchId, batchId), eq(l.status, "pending"), inArray(l.line, next)))
    .returning({ line: l.line, customId: l.customId, bodyJson: l.bodyJson });
  return rows.sort((a, b) => a.line - b.line);
}

/** Ends a running line with its result; false when it was not running (put back or taken over meanwhile). */
export async function endLine(db: Db, batchId: string, line: number, status: "done" | "failed", resultJson: string): Promise<boolean> {
  const l = db.t.batchLines;
  const rows = await db.q.update(l).set({ status, resultJson }).where(and(eq(l.batchId, batchId), eq(l.line, line), eq(l.status, "running"))).returning({ line: l.line });
  return rows.length > 0;
}

/** Puts running lines back to pending: one whose run was cut short here, or all of a batch whose runner is gone. */
export async function releaseLines(db: Db, batchId: string, lines?: readonly number[]): Promise<number> {
  const l = db.t.batchLines;
  const rows = await db.q
    .update(l)
    .set({ status: "pending" })
    .where(and(eq(l.batchId, batchId), eq(l.status, "running"), lines ? inArray(l.line, [...lines]) : undefined))
    .returning({ line: l.line });
  return rows.length;
}

/** Every line of a batch in input order, without its body. */
export async function batchLinesInOrder(db: Db, batchId: string): Promise<LineRow[]> {
  const l = db.t.batchLines;
  return await db.q.select({ line: l.line, customId: l.customId, status: l.status, resultJson: l.resultJson }).from(l).where(eq(l.batchId, batchId)).orderBy(asc(l.line));
}

export interface BatchEnd {
  id: string;
  /** The runner's claim: the end is written only while it still holds the batch. */
  owner: string;
  epoch: number;
  set: Partial<NewBatchRow> & { status: string };
  /** The output and error files' rows (their bytes are stored already). */
  files: NewFileRow[];
}

/** Writes the batch's files' rows and its final state in one transaction, while the runner holds it; false when it does not. */
export async function endBatch(db: Db, end: BatchEnd): Promise<boolean> {
  const held = (b: Tables["batches"]) => and(eq(b.id, end.id), eq(b.leaseOwner, end.owner), eq(b.leaseEpoch, end.epoch), inArray(b.status, UNFINISHED));
  if (db.dialect === "sqlite") {
    const { t } = db;
    return db.lite.transaction((tx) => {
      const moved = tx.update(t.batches).set(end.set).where(held(t.batches)).returning({ id: t.batches.id }).all();
      if (!moved.length) return false;
      if (end.files.length) tx.insert(t.files).values(end.files).run();
      return true;
    });
  }
  const { pt } = db;
  return db.pg.transaction(async (tx) => {
    const moved = await tx.update(pt.batches).set(end.set).where(held(pt.batches as unknown as Tables["batches"])).returning({ id: pt.batches.id });
    if (!moved.length) return false;
    if (end.files.length) await tx.insert(pt.files).values(end.files);
    return true;
  });
}
