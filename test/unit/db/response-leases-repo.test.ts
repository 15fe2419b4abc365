// Leases on unfinished stored responses: renewed by their owner, claimed once expired, never by two replicas at once.
import { describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { createKey } from "../../../src/db/keys-repo.ts";
import { claimExpiredLeases, releaseLeases, renewLeases } from "../../../src/db/response-leases-repo.ts";
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

describe.each(DIALECTS)("response leases ($name)", (dialect) => {
  test("an owner renews only its unfinished leases", async () => {
    const { db, add, lease, close } = await setup(dialect);
    await add("resp_a", { owner: "r1", until: 1000 });
    await add("resp_b", { status: "in_progress", owner: "r1", until: 1000 });
    await add("resp_done", { status: "completed", owner: "r1", until: 1000 });
    await add("resp_other", { owner: "r2", until: 1000 });
    expect((await renewLeases(db, "r1", 5000)).sort()).toEqual(["resp_a", "resp_b"]);
    expect(await lease("resp_a")).toEqual({ owner: "r1", until: 5000 });
    expect((await lease("resp_done"))!.until).toBe(1000);
    expect((await lease("resp_other"))!.until).toBe(1000);
    await close();
  });

  test("a claim takes expired and lease-less unfinished responses, oldest first, and leaves live leases alone", async () => {
    const { db, add, lease, close } = await setup(dialect);
    await add("resp_expired", { owner: "dead", until: 1000, createdAt: 102 });
    await add("resp_never", { status: "in_progress", createdAt: 101 });
    await add("resp_live", { owner: "alive", until: 3000 });
    await add("resp_done", { status: "failed", owner: "dead", until: 1000 });
    const claimed = await claimExpiredLeases(db, "me", { nowMs: 2000, untilMs: 7000, limit: 10 });
    expect(claimed.map((r) => [r.id, r.status, r.leaseOwner])).toEqual([["resp_never", "in_progress", "me"], ["resp_expired", "queued", "me"]]);
    expect(await lease("resp_live")).toEqual({ owner: "alive", until: 3000 });
    expect(await claimExpiredLeases(db, "other", { nowMs: 2000, untilMs: 7000, limit: 10 })).toEqual([]);
    expect(await claimExpiredLeases(db, "me", { nowMs: 2000, untilMs: 7000, limit: 1 })).toEqual([]);
    await close();
  });

  test("a released lease is claimable at once", async () => {
    const { db, add, close } = await setup(dialect);
    await add("resp_a", { owner: "r1", until: 9_000 });
    expect(await releaseLeases(db, "r1")).toBe(1);
    expect((await claimExpiredLeases(db, "r2", { nowMs: 2000, untilMs: 7000, limit: 10 })).map((r) => r.id)).toEqual(["resp_a"]);
    await close();
  });

  test("two replicas claiming at once never take the same response", async () => {
    const { db, add, another, close } = await setup(dialect);
    for (let i = 0; i < 30; i++) await add(`resp_${i}`, { owner: "dead", until: 1000, createdAt: 100 + i });
    const other = await another();
    const taken: string[][] = [[], []];
    for (let round = 0; round < 8; round++) {
      const got = await Promise.all([db, other].map((d, i) => claimExpiredLeases(d, `r${i}`, { nowMs: 2000, untilMs: 9000, limit: 3 })));
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
      const claimed = await claimExpiredLeases(db, "me", { nowMs: 2000, untilMs: 9000, limit: 10 });
      expect(claimed.map((r) => r.id)).toEqual(["resp_free"]);
    });
    expect((await claimExpiredLeases(db, "me", { nowMs: 2000, untilMs: 9000, limit: 10 })).map((r) => r.id)).toEqual(["resp_locked"]);
    await close();
  });
});
