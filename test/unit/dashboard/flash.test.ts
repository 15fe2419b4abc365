// The dashboard's one-shot notes: the in-process store and the Redis one replicas share hold to the same rules (read
// once, per session, each team's keys for that team's page); the Redis one also seals what it keeps.
import { describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { type FlashStore, MemoryFlashStore } from "../../../src/dashboard/flash.ts";
import { FLASH_PREFIX, RedisFlashStore } from "../../../src/dashboard/redis-flash.ts";
import { RedisConnection } from "../../../src/redis/connection.ts";
import { redisPerFile } from "../../helpers/redis-server.ts";
import { waitFor } from "../../helpers/wait-for.ts";

const shared = redisPerFile();
const secretKey = randomBytes(32);
let run = 0;

/** A replica's Redis store: its own connection; sessions apart from other tests' by a fresh name each time. */
function redisStore(key = secretKey, ttlMs?: number): { store: RedisFlashStore; conn: RedisConnection } {
  const conn = new RedisConnection(shared.redis.url);
  shared.track(conn);
  return { store: new RedisFlashStore(conn, key, ttlMs), conn };
}

const stores: [string, () => FlashStore][] = [
  ["in memory", () => new MemoryFlashStore()],
  ["in Redis", () => redisStore().store],
];

for (const [where, make] of stores) {
  describe(`one-shot notes ${where}`, () => {
    test("each team's keys wait for that team's page, in the order made; another session or team takes none", async () => {
      const f = make();
      const s = `s${++run}`;
      await f.putKey(s, { teamId: 1, id: 10, name: "a", key: "LLM|10|x" });
      await f.putKey(s, { teamId: 2, id: 11, name: "b", key: "LLM|11|y" });
      await f.putKey(s, { teamId: 1, id: 12, name: "c", key: "LLM|12|z" });
      expect(await f.take(s)).toBeNull();
      expect(await f.takeKeys(`other${run}`, 1)).toEqual([]);
      expect((await f.takeKeys(s, 2)).map((k) => k.id)).toEqual([11]);
      expect(await f.takeKeys(s, 1)).toEqual([
        { teamId: 1, id: 10, name: "a", key: "LLM|10|x" },
        { teamId: 1, id: 12, name: "c", key: "LLM|12|z" },
      ]);
      expect(await f.takeKeys(s, 1)).toEqual([]);
    });

    test("a notice is read once, per session; a newer one replaces it; sign-out drops all", async () => {
      const f = make();
      const s = `s${++run}`;
      await f.put(s, { notice: "old" });
      await f.put(s, { notice: "hello" });
      expect(await f.take(`other${run}`)).toBeNull();
      expect(await f.take(s)).toEqual({ notice: "hello" });
      expect(await f.take(s)).toBeNull();
      await f.put(s, { notice: "x" });
      await f.putKey(s, { teamId: 3, id: 1, name: "k", key: "LLM|1|k" });
      await f.drop(s);
      expect(await f.take(s)).toBeNull();
      expect(await f.takeKeys(s, 3)).toEqual([]);
    });
  });
}

describe("one-shot notes in memory", () => {
  test("dropped after five minutes", async () => {
    const clock = { t: 0 };
    const f = new MemoryFlashStore(() => clock.t);
    await f.put("s1", { notice: "late" });
    clock.t += 5 * 60_000;
    expect(await f.take("s1")).toBeNull();
  });
});

describe("one-shot notes in Redis, shared by replicas", () => {
  test("a key left by one replica is shown by another, once, whichever of many racing reads gets it", async () => {
    const [a, b, c] = [redisStore().store, redisStore().store, redisStore().store];
    const s = `s${++run}`;
    await a.putKey(s, { teamId: 7, id: 70, name: "ci", key: "LLM|70|secret" });
    const reads = await Promise.all([b, c, b, c].map((r) => r.takeKeys(s, 7)));
    expect(reads.flat()).toEqual([{ teamId: 7, id: 70, name: "ci", key: "LLM|70|secret" }]);
  });

  test("Redis holds no key text in the clear, and a value moved to another session or sealed under another secret opens to nothing", async () => {
    const { store, conn } = redisStore();
    const s = `s${++run}`;
    await store.putKey(s, { teamId: 1, id: 5, name: "n", key: "LLM|5|plain-secret-text" });
    const raw = (await conn.send("HGETALL", [FLASH_PREFIX + s])) as Record<string, string> | string[];
    expect(JSON.stringify(raw)).not.toContain("plain-secret-text");
    // The same fields under another session's hash: bound to their session, they are refused.
    await conn.send("RENAME", [FLASH_PREFIX + s, `${FLASH_PREFIX}moved${run}`]);
    expect(await store.takeKeys(`moved${run}`, 1)).toEqual([]);
    await store.putKey(s, { teamId: 1, id: 6, name: "n", key: "LLM|6|x" });
    expect(await redisStore(randomBytes(32)).store.takeKeys(s, 1)).toEqual([]);
  });

  test("a session's notes expire when nobody follows the redirect", async () => {
    const { store, conn } = redisStore(secretKey, 200);
    const s = `s${++run}`;
    await store.put(s, { notice: "gone soon" });
    await waitFor(async () => (await conn.send("EXISTS", [FLASH_PREFIX + s])) === 0, { what: "the notes to expire" });
    expect(await store.take(s)).toBeNull();
  });
});
