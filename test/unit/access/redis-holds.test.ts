// What only the Redis hold store has: replicas racing on one balance, leases that free a dead replica's holds and are
// renewed while requests run, keys that expire, and an unreachable Redis failing closed.
import { describe, expect, test } from "bun:test";
import { BillingHolds } from "../../../src/access/billing-holds.ts";
import { HOLD_PREFIX, LEASE_MS, RedisHoldStore } from "../../../src/access/redis-holds.ts";
import { RELEASED_KEPT_MS } from "../../../src/access/hold-store.ts";
import { credit, setBillingEnabled } from "../../../src/db/billing-repo.ts";
import { openDatabase } from "../../../src/db/client.ts";
import { createTeam } from "../../../src/db/teams-repo.ts";
import { RedisConnection } from "../../../src/redis/connection.ts";
import { tempDir } from "../../helpers/kiln.ts";
import { redisPerFile, startRedis } from "../../helpers/redis-server.ts";

const shared = redisPerFile();

let run = 0;
/** One replica's store: its own connection to the shared Redis. */
function replica(opts: ConstructorParameters<typeof RedisHoldStore>[1] = {}, prefix = `rh${++run}:`) {
  const conn = new RedisConnection(shared.redis.url);
  const store = new RedisHoldStore(conn, { prefix, ...opts });
  shared.track(store, conn);
  return store;
}

describe("RedisHoldStore", () => {
  test("three replicas, 64 racing holds of 410 against a balance of 4,100: exactly 10 held, and each replica sees them all", async () => {
    const db = await openDatabase(tempDir("kiln-rholds-"));
    const team = await createTeam(db, "t");
    await setBillingEnabled(db, team.id, true);
    await credit(db, team.id, 4100, null);
    const prefix = `rh${++run}:`;
    const replicas = [0, 1, 2].map(() => new BillingHolds(db, replica({}, prefix)));
    const results = await Promise.allSettled(Array.from({ length: 64 }, (_, i) => replicas[i % 3]!.hold(team.id, 410, "x")));
    const held = results.filter((r) => r.status === "fulfilled");
    expect(held).toHaveLength(10);
    expect(results.filter((r) => r.status === "rejected").every((r) => (r as PromiseRejectedResult).reason.status === 402)).toBe(true);
    for (const r of replicas) expect(await r.heldBy(team.id)).toBe(4100);
    // A release on one replica frees room on the others.
    await (held[0] as PromiseFulfilledResult<() => Promise<void>>).value();
    expect(await replicas[2]!.hold(team.id, 410, "y")).toBeFunction();
  });

  test("a replica that dies without releasing holds nothing once its lease runs out; a live one's lease is renewed", async () => {
    let t = 1_000_000_000;
    const prefix = `rh${++run}:`;
    const dead = replica({ now: () => t }, prefix);
    const live = replica({ now: () => t }, prefix);
    expect(await dead.hold(1, "d", 300, 1000, 0)).toEqual({ ok: true, available: 700 });
    expect(await live.hold(1, "l", 300, 1000, 0)).toEqual({ ok: true, available: 400 });
    dead.close();
    t += LEASE_MS - 1;
    await live.renew();
    expect(await live.heldBy(1)).toBe(600);
    t += 1;
    expect(await live.heldBy(1)).toBe(300);
    expect(await live.hold(1, "m", 700, 1000, 0)).toEqual({ ok: true, available: 0 });
  });

  test("a running hold whose lease ran out while Redis was away comes back at the next renewal", async () => {
    let t = 2_000_000_000;
    const store = replica({ now: () => t });
    await store.hold(3, "r", 250, 1000, 0);
    t += LEASE_MS;
    expect(await store.heldBy(3)).toBe(0);
    await store.renew();
    expect(await store.heldBy(3)).toBe(250);
    // Released, it is no longer renewed.
    await store.release(3, "r");
    await store.renew();
    expect(await store.heldBy(3)).toBe(0);
  });

  test("keys carry the kiln:hold: prefix and expire once no lease or release can matter", async () => {
    const raw = await shared.redis.client();
    const store = replica({}, HOLD_PREFIX);
    const teamId = 900_000 + run;
    await store.hold(teamId, "h1", 5, 10, 0);
    const active = `${HOLD_PREFIX}${teamId}:active`;
    expect(await raw.send("HGETALL", [active])).toEqual({ h1: "5" });
    const ttl = Number(await raw.send("PTTL", [active]));
    expect(ttl).toBeGreaterThan(LEASE_MS + RELEASED_KEPT_MS - 5000);
    expect(ttl).toBeLessThanOrEqual(LEASE_MS + RELEASED_KEPT_MS);
    await store.release(teamId, "h1");
    expect(Number(await raw.send("ZCARD", [`${HOLD_PREFIX}${teamId}:released`]))).toBe(1);
  });

  test("an unreachable Redis refuses the hold with 503 backend_unavailable, never a 402 or a hold it did not place", async () => {
    const own = await startRedis();
    const conn = new RedisConnection(own.url);
    const store = new RedisHoldStore(conn);
    try {
      const db = await openDatabase(tempDir("kiln-rholds-"));
      const team = await createTeam(db, "t");
      await setBillingEnabled(db, team.id, true);
      await credit(db, team.id, 1000, null);
      const holds = new BillingHolds(db, store);
      await own.kill();
      await expect(holds.hold(team.id, 10, "x")).rejects.toMatchObject({ status: 503, code: "backend_unavailable" });
      await own.restart();
      expect(await holds.hold(team.id, 10, "x")).toBeFunction();
    } finally {
      store.close();
      conn.close();
      await own.stop();
    }
  });
});
