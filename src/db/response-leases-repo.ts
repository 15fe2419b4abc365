// Leases on unfinished stored responses, so that replicas sharing one Postgres each run their own and take over a dead
// one's: a queued or in-progress response names the replica running it (lease_owner), until when (lease_until, unix ms
// on the database's clock) and which claim of it this is (lease_epoch, raised by every claim). The owner renews the
// leases of the jobs it runs; a lease past its time is claimed by another replica's sweep, and the old runner's writes,
// which name owner and epoch (response-events-repo.ts), are refused from then on.
import { and, asc, eq, inArray, isNull, lt, ne, notInArray, or, sql } from "drizzle-orm";
import type { Db } from "./client.ts";
import { dbDeadline, dbNowMs } from "./db-clock.ts";
import type { ResponseRow } from "./responses-repo.ts";

const UNFINISHED = ["queued", "in_progress"];

/** A lease as its runner knows it: the response, and the claim (epoch) its run started under. */
export interface HeldLease {
  id: string;
  epoch: number;
}

/**
 * Extends `owner`'s leases on `ids` (the jobs it runs) to `leaseMs` past now on the database's clock, and returns those
 * it still holds with their epochs: an id missing, or back with another epoch, was claimed by another replica.
 */
export async function renewLeases(db: Db, owner: string, o: { ids: readonly string[]; leaseMs: number }): Promise<HeldLease[]> {
  if (!o.ids.length) return [];
  const r = db.t.responses;
  if (db.dialect === "sqlite") {
    return await db.q.update(r).set({ leaseUntil: dbDeadline(db, o.leaseMs) }).where(and(eq(r.leaseOwner, owner), inArray(r.id, [...o.ids]))).returning({ id: r.id, epoch: r.leaseEpoch });
  }
  const { pg, pt } = db;
  const p = pt.responses;
  // Locked in id order, as a stored stream's writes lock theirs (response-events-repo.ts), so the two never deadlock.
  const mine = pg.select({ id: p.id }).from(p).where(and(eq(p.leaseOwner, owner), inArray(p.id, [...o.ids]))).orderBy(asc(p.id)).for("update");
  return await pg.update(p).set({ leaseUntil: dbDeadline(db, o.leaseMs) }).where(and(inArray(p.id, mine), eq(p.leaseOwner, owner))).returning({ id: p.id, epoch: p.leaseEpoch });
}

/** Of the leases a replica ran under, those the renewal did not give back as they were: lost to another replica. Pure. */
export function lostLeases(held: readonly HeldLease[], kept: readonly HeldLease[]): HeldLease[] {
  const epochs = new Map(kept.map((k) => [k.id, k.epoch]));
  return held.filter((h) => epochs.get(h.id) !== h.epoch);
}

/**
 * Takes up to `limit` unfinished responses whose lease ran out on the database's clock (or that never had one) for
 * `owner`, for `leaseMs`, oldest first, raising each one's epoch, and returns them as they were claimed. Never one
 * `owner` holds itself, nor one of `running` (the jobs still live in its process, one it lost included): a replica
 * does not take over what it runs. On Postgres the rows are locked with SKIP LOCKED in the same statement, so two
 * replicas sweeping at once never claim the same response.
 */
export async function claimExpiredLeases(db: Db, owner: string, o: { leaseMs: number; limit: number; running?: readonly string[] }): Promise<ResponseRow[]> {
  const running = [...(o.running ?? [])];
  if (db.dialect === "sqlite") {
    const { lite, t } = db;
    const r = t.responses;
    const set = { leaseOwner: owner, leaseUntil: dbDeadline(db, o.leaseMs), leaseEpoch: sql`${r.leaseEpoch} + 1` };
    // One writer at a time: the select and the update are one statement, so nothing claims between them.
    const expired = lite.select({ id: r.id }).from(r).where(claimable(db, r, owner, running)).orderBy(asc(r.createdAt)).limit(o.limit);
    return oldestFirst(await lite.update(r).set(set).where(inArray(r.id, expired)).returning());
  }
  const { pg, pt } = db;
  const r = pt.responses;
  const set = { leaseOwner: owner, leaseUntil: dbDeadline(db, o.leaseMs), leaseEpoch: sql`${r.leaseEpoch} + 1` };
  const expired = pg.select({ id: r.id }).from(r).where(claimable(db, r, owner, running)).orderBy(asc(r.createdAt)).limit(o.limit).for("update", { skipLocked: true });
  // The rows are locked by the subquery and checked again by the update: another claim committed meanwhile is skipped.
  const rows = await pg.update(r).set(set).where(and(inArray(r.id, expired), claimable(db, r, owner, running))).returning();
  return oldestFirst(rows as ResponseRow[]);
}

/** RETURNING keeps no order: the claimed rows are handled in the order they were created. */
const oldestFirst = (rows: ResponseRow[]) => rows.sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1));

/** Lets other replicas take `owner`'s unfinished responses at once (a draining replica hands over what it leaves). */
export async function releaseLeases(db: Db, owner: string): Promise<number> {
  const { responses: r } = db.t;
  const rows = await db.q
    .update(r)
    .set({ leaseUntil: 0 })
    .where(and(eq(r.leaseOwner, owner), inArray(r.status, UNFINISHED)))
    .returning({ id: r.id });
  return rows.length;
}

type Col = Parameters<typeof eq>[0];
type Cols = { id: Col; status: Col; leaseOwner: Col; leaseUntil: Col };

/** Unfinished, its lease run out (or never taken), held by another replica (or none), and not running here. */
function claimable(db: Db, r: Cols, owner: string, running: string[]) {
  return and(
    inArray(r.status, UNFINISHED),
    or(isNull(r.leaseUntil), lt(r.leaseUntil, dbNowMs(db))),
    or(isNull(r.leaseOwner), ne(r.leaseOwner, owner)),
    running.length ? notInArray(r.id, running) : undefined,
  );
}
