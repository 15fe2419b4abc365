// Leases on unfinished stored responses, so that replicas sharing one Postgres each run their own and take over a dead
// one's: a queued or in-progress response names the replica running it (lease_owner) and until when (lease_until, unix
// ms). The owner renews its leases; a lease past its time is claimed by whichever replica's sweep locks it first.
import { and, asc, eq, inArray, isNull, lt, or } from "drizzle-orm";
import type { Db } from "./client.ts";
import type { ResponseRow } from "./responses-repo.ts";

const UNFINISHED = ["queued", "in_progress"];

/** Extends every unfinished lease `owner` holds to `untilMs`; returns the ids it still holds. */
export async function renewLeases(db: Db, owner: string, untilMs: number): Promise<string[]> {
  const { responses: r } = db.t;
  const rows = await db.q
    .update(r)
    .set({ leaseUntil: untilMs })
    .where(and(eq(r.leaseOwner, owner), inArray(r.status, UNFINISHED)))
    .returning({ id: r.id });
  return rows.map((x) => x.id);
}

/**
 * Takes up to `limit` unfinished responses whose lease ran out before `nowMs` (or that never had one) for `owner`,
 * until `untilMs`, oldest first, and returns them as they were claimed. On Postgres the rows are locked with
 * SKIP LOCKED in the same statement, so two replicas sweeping at once never claim the same response.
 */
export async function claimExpiredLeases(db: Db, owner: string, o: { nowMs: number; untilMs: number; limit: number }): Promise<ResponseRow[]> {
  const set = { leaseOwner: owner, leaseUntil: o.untilMs };
  if (db.dialect === "sqlite") {
    const { lite, t } = db;
    const r = t.responses;
    // One writer at a time: the select and the update are one statement, so nothing claims between them.
    const expired = lite.select({ id: r.id }).from(r).where(expiredWhere(r, o.nowMs)).orderBy(asc(r.createdAt)).limit(o.limit);
    return oldestFirst(await lite.update(r).set(set).where(inArray(r.id, expired)).returning());
  }
  const { pg, pt } = db;
  const r = pt.responses;
  const expired = pg
    .select({ id: r.id })
    .from(r)
    .where(expiredWhere(r, o.nowMs))
    .orderBy(asc(r.createdAt))
    .limit(o.limit)
    .for("update", { skipLocked: true });
  // The rows are locked by the subquery and checked again by the update: another claim committed meanwhile is skipped.
  const rows = await pg.update(r).set(set).where(and(inArray(r.id, expired), expiredWhere(r, o.nowMs))).returning();
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

type Cols = { status: Parameters<typeof eq>[0]; leaseUntil: Parameters<typeof lt>[0] };

function expiredWhere(r: Cols, nowMs: number) {
  return and(inArray(r.status, UNFINISHED), or(isNull(r.leaseUntil), lt(r.leaseUntil, nowMs)));
}
