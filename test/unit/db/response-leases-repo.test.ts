// Leases on unfinished stored responses: renewed by their owner on the database's clock, claimed once expired by another
// replica (never by their owner, never by two at once), each claim under a new epoch.
import { describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { createKey } from "../../../src/db/keys-repo.ts";
import { claimExpiredLeases, lostLeases, releaseLeases, renewLeases } from "../../../src/db/response-leases-repo.ts";
import { insertResponse } from "../../../src/db/responses-repo.ts";
import { createTeam } from "../../../src/db/teams-repo.ts";
import { DIALECTS, type Dialect } from "../../helpers/databases.ts";

async function setup(dialect: Dialect) {
  const t = await dialect.open();
  const team = await createTeam(t.db, "a");
  const key = await createKey(t.db, team.id, "k");
  const add = (id: string, o: { status?: string; owner?: string | null; until?: number | null; createdAt?: number } = {}) =>
    insertResponse(t.db, {
      id, teamId: team.id, keyId: key.id, model: "m", status: o.status ?? "queued", background: true, requestJson: "{}", responseJson: "{}",
      createdAt: o.createdAt ?? 100, updatedAt: 100, expiresAt: 10_000_000_000, leaseOwner: o.owner ?? null, leaseUntil: o.until ?? null,
    }, []);
  const lease = async (id: string) =>
    (await t.all<{ owner: string | null; until: number | null }>(sql`SELECT lease_owner AS owner, lease_until AS until FROM responses WHERE id = ${id}`))[0];
  return { ...t, add, lease };
}

const LIVE = () => Date.now() + 600_000;

describe("lostLeases", () => {
  test("a lease the renewal did not give back, or gave back under another epoch, is lost", () => {
    const held = [{ id: "a", epoch: 0 }, { id: "b", epoch: 2 }, { id: "c", epoch: 1 }];
    expect(lostLeases(held, [{ id: "a", epoch: 0 }, { id: "b", epoch: 3 }])).toEqual([{ id: "b", epoch: 2 }, { id: "c", epoch: 1 }]);
    expect(lostLeases(held, held)).toEqual([]);
    expect(lostLeases([], [{ id: "a", epoch: 0 }])).toEqual([]);
  });
});

describe.each(DIALECTS)("response leases ($name)", (dialect) => {
  test("an owner renews the leases it holds on the jobs it names, to a deadline on the database's clock, and learns their epochs", async () => {
    const { db, add, lease, close } = await setup(dialect);
    await add("resp_a", { owner: "r1", until: 1000 });
    await add("resp_b", { status: "in_progress", owner: "r1", until: 1000 });
    await add("resp_unnamed", { owner: "r1", until: 1000 });
    await add("resp_other", { owner: "r2", until: 1000 });
    const before = Date.now();
    const kept = await renewLeases(db, "r1", { ids: ["resp_a", "resp_b", "resp_other"], leaseMs: 5000 });
    const after = Date.now();
    expect(kept.sort((x, y) => (x.id < y.id ? -1 : 1))).toEqual([{ id: "resp_a", epoch: 0 }, { id: "resp_b", epoch: 0 }]);
    const until = Number((await lease("resp_a"))!.until);
    // The database's clock on this box: the same as this process's, to a second.
    expect(until).toBeGreaterThanOrEqual(before + 5000 - 1000);
    expect(until).toBeLessThanOrEqual(after + 5000 + 1000);
    expect(Number((await lease("resp_unnamed"))!.until)).toBe(1000);
    expect(await lease("resp_other")).toEqual({ owner: "r2", until: 1000 });
    expect(await renewLeases(db, "r1", { ids: [], leaseMs: 5000 })).toEqual([]);
    await close();
  });

  test("a claim takes expired and lease-less unfinished responses of others, oldest first, raising their epoch; never its own, a live lease, or a job running here", async () => {
    const { db, add, lease, close } = await setup(dialect);
    const live = LIVE();
    await add("resp_expired", { owner: "dead", until: 1000, createdAt: 102 });
    await add("resp_never", { status: "in_progress", createdAt: 101 });
    await add("resp_live", { owner: "alive", until: live });
    await add("resp_done", { status: "failed", owner: "dead", until: 1000 });
    await add("resp_mine", { status: "in_progress", owner: "me", until: 1000 });
    await add("resp_running_here", { owner: "dead", until: 1000 });
    const claimed = await claimExpiredLeases(db, "me", { leaseMs: 5000, limit: 10, running: ["resp_running_here"] });
    expect(claimed.map((r) => [r.id, r.status, r.leaseOwner, r.leaseEpoch])).toEqual([["resp_never", "in_progress", "me", 1], ["resp_expired", "queued", "me", 1]]);
    expect(Number(claimed[0]!.leaseUntil)).toBeGreaterThan(Date.now());
    expect(await lease("resp_live")).toEqual({ owner: "alive", until: live });
    expect(await lease("resp_mine")).toEqual({ owner: "me", until: 1000 });
    // Its own expired lease is another replica's to take, with the next epoch.
    expect((await claimExpiredLeases(db, "other", { leaseMs: 5000, limit: 10 })).map((r) => [r.id, r.leaseEpoch])).toEqual([["resp_mine", 1], ["resp_running_here", 1]]);
    await close();
  });

  test("a released lease is claimable at once", async () => {
    const { db, add, close } = await setup(dialect);
    await add("resp_a", { owner: "r1", until: LIVE() });
    expect(await releaseLeases(db, "r1")).toBe(1);
    expect((await claimExpiredLeases(db, "r2", { leaseMs: 5000, limit: 10 })).map((r) => r.id)).toEqual(["resp_a"]);
    await close();
  });

  test("two replicas claiming at once never take the same response", async () => {
    const { db, add, another, close } = await setup(dialect);
    for (let i = 0; i < 30; i++) await add(`resp_${i}`, { owner: "dead", until: 1000, createdAt: 100 + i });
    const other = await another();
    const taken: string[][] = [[], []];
    for (let round = 0; round < 8; round++) {
      const got = await Promise.all([db, other].map((d, i) => claimExpiredLeases(d, `r${i}`, { leaseMs: 5000, limit: 3 })));
      got.forEach((rows, i) => taken[i]!.push(...rows.map((r) => r.id)));
    }
    const all = [...taken[0]!, ...taken[1]!];
    expect(new Set(all).size).toBe(all.length);
    expect(all.length).toBe(30);
    await close();
  });
});

describe("response leases (postgres, row locks)", () => {
  const pg = DIALECTS.find((d) => d.name === "postgres")!;
  test("a claim skips a row another transaction holds locked", async () => {
    const { db, add, another, close } = await setup(pg);
    await add("resp_locked", { owner: "dead", until: 1000, createdAt: 100 });
    await add("resp_free", { owner: "dead", until: 1000, createdAt: 101 });
    const other = await another();
    if (other.dialect !== "postgres") throw new Error("postgres expected");
    await other.pg.transaction(async (tx) => {
      await tx.execute(sql`SELECT id FROM responses WHERE id = 'resp_locked' FOR UPDATE`);
      const claimed = await claimExpiredLeases(db, "me", { leaseMs: 5000, limit: 10 });
      expect(claimed.map((r) => r.id)).toEqual(["resp_free"]);
    });
    expect((await claimExpiredLeases(db, "me", { leaseMs: 5000, limit: 10 })).map((r) => r.id)).toEqual(["resp_locked"]);
    await close();
  });
});
