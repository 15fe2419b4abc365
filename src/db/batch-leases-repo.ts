// Leases on unfinished batches, as stored background responses have (response-leases-repo.ts): the replica running a
// batch names itself (lease_owner) until a deadline on the database's clock (lease_until), and each claim raises
// lease_epoch. The owner renews its leases; another replica claims a batch whose lease ran out, puts its running lines
// back to pending and runs it on; the old runner, finding its lease gone at its next renewal or write, stops.
import { and, asc, eq, inArray, isNull, lt, ne, notInArray, or, sql } from "drizzle-orm";
import type { HeldLease } from "./response-leases-repo.ts";
import { type BatchRow, UNFINISHED } from "./batches-repo.ts";
import type { Db, Tables } from "./client.ts";
import { dbDeadline, dbNowMs } from "./db-clock.ts";

/** Extends `owner`'s leases on `ids`; returns those it still holds with their epochs (a missing one was claimed). */
export async function renewBatchLeases(db: Db, owner: string, o: { ids: readonly string[]; leaseMs: number }): Promise<HeldLease[]> {
  if (!o.ids.length) return [];
  const b = db.t.batches;
  return await db.q
    .update(b)
    .set({ leaseUntil: dbDeadline(db, o.leaseMs) })
    .where(and(eq(b.leaseOwner, owner), inArray(b.id, [...o.ids]), inArray(b.status, UNFINISHED)))
    .returning({ id: b.id, epoch: b.leaseEpoch });
}

/**
 * Takes up to `limit` unfinished batches for `owner`, oldest first, raising each one's epoch: those whose lease ran out
 * (or, with `all`, every one: a lone kiln's start, when nothing else can be running them), never one of `running`
 * (live in this process). On Postgres the rows are locked with SKIP LOCKED, so two replicas never claim the same one.
 */
export async function claimBatches(db: Db, owner: string, o: { leaseMs: number; limit: number; running: readonly string[]; all?: boolean }): Promise<BatchRow[]> {
  const running = [...o.running];
  const claimable = (b: Tables["batches"]) =>
    and(
      inArray(b.status, UNFINISHED),
      o.all ? undefined : and(or(isNull(b.leaseUntil), lt(b.leaseUntil, dbNowMs(db))), or(isNull(b.leaseOwner), ne(b.leaseOwner, owner))),
      running.length ? notInArray(b.id, running) : undefined,
    );
  let rows: BatchRow[];
  if (db.dialect === "sqlite") {
    const b = db.t.batches;
    const set = { leaseOwner: owner, leaseUntil: dbDeadline(db, o.leaseMs), leaseEpoch: sql`${b.leaseEpoch} + 1` };
    const next = db.lite.select({ id: b.id }).from(b).where(claimable(b)).orderBy(asc(b.seq)).limit(o.limit);
    rows = await db.lite.update(b).set(set).where(inArray(b.id, next)).returning();
  } else {
    const b = db.pt.batches;
    const lite = b as unknown as Tables["batches"];
    const set = { leaseOwner: owner, leaseUntil: dbDeadline(db, o.leaseMs), leaseEpoch: sql`${b.leaseEpoch} + 1` };
    const next = db.pg.select({ id: b.id }).from(b).where(claimable(lite)).orderBy(asc(b.seq)).limit(o.limit).for("update", { skipLocked: true });
    rows = (await db.pg.update(b).set(set).where(and(inArray(b.id, next), claimable(lite))).returning()) as BatchRow[];
  }
  return rows.sort((x, y) => x.seq - y.seq);
}

/** Lets other replicas take `owner`'s unfinished batches at once (a draining replica hands over what it leaves). */
export async function releaseBatchLeases(db: Db, owner: string): Promise<number> {
  const b = db.t.batches;
  const rows = await db.q.update(b).set({ leaseUntil: 0 }).where(and(eq(b.leaseOwner, owner), inArray(b.status, UNFINISHED))).returning({ id: b.id });
  return rows.length;
}
