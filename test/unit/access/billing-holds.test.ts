// Billing holds: worst-case prices held against the balance, released once, journaled charges counted until they are
// written; missing and lapsed accounts refused. Run against both hold stores: this process's memory and Redis.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { BillingHolds } from "../../../src/access/billing-holds.ts";
import { type HoldStore, MemoryHoldStore } from "../../../src/access/hold-store.ts";
import { RedisHoldStore } from "../../../src/access/redis-holds.ts";
import { replaySettlements } from "../../../src/billing/settle.ts";
import { appendSettlement, journalPathFor } from "../../../src/billing/settlement-journal.ts";
import { credit, setBillingEnabled, setLapsed } from "../../../src/db/billing-repo.ts";
import { localDirOf, openDatabase } from "../../../src/db/client.ts";
import { createKey } from "../../../src/db/keys-repo.ts";
import { recordSettlement } from "../../../src/db/settlement-repo.ts";
import { createTeam } from "../../../src/db/teams-repo.ts";
import { memoryLogger } from "../../../src/log/logger.ts";
import { RedisConnection } from "../../../src/redis/connection.ts";
import { tempDir } from "../../helpers/kiln.ts";
import { startRedis, type TestRedis } from "../../helpers/redis-server.ts";

let redis: TestRedis;
const stores: HoldStore[] = [];
const connections: RedisConnection[] = [];
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  for (const s of stores) s.close();
  for (const c of connections) c.close();
  await redis.stop();
});

let run = 0;
const STORES: [string, () => HoldStore][] = [
  ["memory", () => new MemoryHoldStore()],
  [
    "Redis",
    () => {
      // Each test's own prefix: team ids repeat across the tests' databases.
      const conn = new RedisConnection(redis.url);
      connections.push(conn);
      const store = new RedisHoldStore(conn, { prefix: `holds${++run}:` });
      stores.push(store);
      return store;
    },
  ],
];

async function refusal(p: Promise<unknown>): Promise<Error & { status?: number }> {
  return p.then(() => {
    throw new Error("expected a refusal");
  }, (e: Error) => e);
}

describe.each(STORES)("BillingHolds over the %s store", (_name, makeStore) => {
  async function setup() {
    const db = await openDatabase(tempDir("kiln-holds-"));
    const team = await createTeam(db, "t");
    return { db, team, holds: new BillingHolds(db, makeStore()) };
  }

  test("holds add up against the balance: the one that does not fit is refused with what it may cost and what is left", async () => {
    const s = await setup();
    await setBillingEnabled(s.db, s.team.id, true);
    await credit(s.db, s.team.id, 900, null);
    const first = await s.holds.hold(s.team.id, 410, "a");
    await s.holds.hold(s.team.id, 410, "b");
    const refused = await refusal(s.holds.hold(s.team.id, 410, "10 input + up to 100 output tokens of m"));
    expect(refused).toMatchObject({ status: 402, type: "billing_error", code: "billing_not_configured" });
    expect(refused.message).toBe(
      "This team's balance cannot cover this request: it may cost up to 0.00041 (10 input + up to 100 output tokens of m), and 0.00008 is available. Add credit, or lower the maximum output tokens.",
    );
    expect(await s.holds.heldBy(s.team.id)).toBe(820);
    // A release gives its share back once, however often it is called.
    await first();
    await first();
    expect(await s.holds.heldBy(s.team.id)).toBe(410);
    expect(await s.holds.hold(s.team.id, 410, "c")).toBeFunction();
  });

  test("64 racing holds against a balance that covers 10 of them: exactly 10 held", async () => {
    const s = await setup();
    await setBillingEnabled(s.db, s.team.id, true);
    await credit(s.db, s.team.id, 4100, null);
    const results = await Promise.allSettled(Array.from({ length: 64 }, () => s.holds.hold(s.team.id, 410, "x")));
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(10);
    expect(await s.holds.heldBy(s.team.id)).toBe(4100);
  });

  test("a charge waiting in the settlement journal counts against the balance until it is written, and then once", async () => {
    const s = await setup();
    await setBillingEnabled(s.db, s.team.id, true);
    await credit(s.db, s.team.id, 1000, null);
    const other = await createTeam(s.db, "other");
    const journal = journalPathFor(localDirOf(s.db))!;
    const charge = async (teamId: number, requestId: string, costMicros: number) =>
      appendSettlement(journal, {
        requestId, teamId, keyId: (await createKey(s.db, teamId, requestId)).id, model: "m-v1", endpoint: "chat", status: "completed",
        inputTokens: 1, outputTokens: 1, reasoningTokens: 0, cachedTokens: 0, images: 0, costMicros, createdAt: 1_767_225_600,
      });
    // The database refused two of the team's charges (and one of another team's): 700 of its 1000 is spent already.
    await charge(s.team.id, "req_a", 400);
    await charge(other.id, "req_x", 900);
    await charge(s.team.id, "req_b", 300);
    expect(await s.holds.journaledBy(s.team.id)).toBe(700);
    expect((await refusal(s.holds.hold(s.team.id, 301, "x"))).message).toContain("and 0.0003 is available");
    const release = await s.holds.hold(s.team.id, 300, "y");
    await release();
    // Written to the database: the balance carries the charges, the journal no longer does, so they count once.
    expect((await replaySettlements(s.db, memoryLogger())).replayed).toBe(3);
    expect(await s.holds.journaledBy(s.team.id)).toBe(0);
    expect((await s.holds.checkAccount(s.team.id)).balanceMicros).toBe(300);
    expect((await refusal(s.holds.hold(s.team.id, 301, "x"))).message).toContain("and 0.0003 is available");
    expect(await s.holds.hold(s.team.id, 300, "y")).toBeFunction();
  });

  test("no account, or a lapsed one, refuses every hold", async () => {
    const s = await setup();
    expect((await refusal(s.holds.hold(s.team.id, 0, "x"))).message).toContain("it has no billing account");
    await setBillingEnabled(s.db, s.team.id, true);
    await credit(s.db, s.team.id, 1000, null);
    await setLapsed(s.db, s.team.id, true);
    await expect(s.holds.checkAccount(s.team.id)).rejects.toThrow("has lapsed");
    expect((await refusal(s.holds.hold(s.team.id, 1, "x"))).message).toContain("has lapsed");
    await setLapsed(s.db, s.team.id, false);
    expect((await s.holds.checkAccount(s.team.id)).balanceMicros).toBe(1000);
  });

  test("a request that settles while a hold reads the balance is not counted twice as available", async () => {
    const s = await setup();
    await setBillingEnabled(s.db, s.team.id, true);
    await credit(s.db, s.team.id, 1000, null);
    const key = await createKey(s.db, s.team.id, "k");
    const releaseA = await s.holds.hold(s.team.id, 600, "a");
    // B begins reading the balance (1000, with A's 600 held); before its read is back, A is charged its 600 and releases.
    const b = s.holds.hold(s.team.id, 600, "b");
    const settled = recordSettlement(s.db, {
      requestId: "req_a", teamId: s.team.id, keyId: key.id, model: "m", endpoint: "chat", status: "completed",
      inputTokens: 1, outputTokens: 1, reasoningTokens: 0, cachedTokens: 0, images: 0, costMicros: 600,
    });
    const releasedA = releaseA();
    // Only 400 is left: B may not take 600 of it, whichever balance its read saw (A's released hold counts for B, whose
    // mark is older, so if B's read saw the charge too, that moment counts it twice and says less is available).
    expect((await refusal(b)).message).toContain("it may cost up to 0.0006 (b)");
    await settled;
    await releasedA;
    expect((await s.holds.checkAccount(s.team.id)).balanceMicros).toBe(400);
    expect(await s.holds.heldBy(s.team.id)).toBe(0);
    // Two holds reading the balance (400) at once: the one taken first counts for the other.
    const c = s.holds.hold(s.team.id, 300, "c");
    const d = s.holds.hold(s.team.id, 300, "d");
    expect((await refusal(d)).message).toContain("and 0.0001 is available");
    await (await c)();
    expect(await s.holds.heldBy(s.team.id)).toBe(0);
  });

  test("a journaled charge replayed while a hold reads the balance counts in the balance or the journal, never in neither", async () => {
    const s = await setup();
    // The balance read's answer comes back only when `arrive` is called (a database across the network takes that long).
    let [read, arrive] = [() => {}, () => {}];
    const [wasRead, arrived] = [new Promise<void>((r) => (read = r)), new Promise<void>((r) => (arrive = r))];
    class SlowRead extends BillingHolds {
      override async checkAccount(teamId: number) {
        const account = await super.checkAccount(teamId);
        read();
        await arrived;
        return account;
      }
    }
    const holds = new SlowRead(s.db, makeStore());
    await setBillingEnabled(s.db, s.team.id, true);
    await credit(s.db, s.team.id, 1000, null);
    const key = await createKey(s.db, s.team.id, "k");
    // The database refused this charge earlier (its hold is long released): 400 of the 1000 is spent.
    appendSettlement(journalPathFor(localDirOf(s.db))!, {
      requestId: "req_j", teamId: s.team.id, keyId: key.id, model: "m", endpoint: "chat", status: "completed",
      inputTokens: 1, outputTokens: 1, reasoningTokens: 0, cachedTokens: 0, images: 0, costMicros: 400, createdAt: 1_767_225_600,
    });
    const hold = holds.hold(s.team.id, 601, "x");
    // The hold has read the balance (1000) but not yet had the answer; meanwhile the journal is replayed and emptied.
    await wasRead;
    expect((await replaySettlements(s.db, memoryLogger())).replayed).toBe(1);
    expect(await holds.journaledBy(s.team.id)).toBe(0);
    arrive();
    expect((await refusal(hold)).message).toContain("it may cost up to 0.000601 (x)");
    expect((await holds.checkAccount(s.team.id)).balanceMicros).toBe(600);
  });
});

describe.each(STORES)("the %s hold store", (_name, make) => {
  test("a hold released after the caller's mark still counts (its charge may be missing from the balance read); one released before does not", async () => {
    const store = make();
    expect(await store.hold(7, "a", 400, 1000, await store.mark(7))).toEqual({ ok: true, available: 600 });
    const mark = await store.mark(7);
    // Settled between this caller's mark and its hold: the balance it read may still include the 400.
    await store.release(7, "a");
    expect(await store.hold(7, "b", 700, 1000, mark)).toEqual({ ok: false, available: 600 });
    expect(await store.hold(7, "b", 700, 1000, await store.mark(7))).toEqual({ ok: true, available: 300 });
    // Releasing twice, or an unknown id, changes nothing.
    await store.release(7, "a");
    await store.release(7, "zzz");
    expect(await store.heldBy(7)).toBe(700);
    // Teams are apart.
    expect(await store.heldBy(8)).toBe(0);
  });
});
