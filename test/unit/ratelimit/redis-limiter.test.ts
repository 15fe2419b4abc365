// What only the Redis limiter has: replicas (separate connections) racing on one bucket, Redis's own clock, keys that
// expire, a script cache that empties, an unreachable Redis (503, then recovery), and step-for-step agreement with the memory limiter.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ApiError } from "../../../src/errors/api-error.ts";
import { MemoryRateLimiter, type TakeResult } from "../../../src/ratelimit/limiter.ts";
import { GRACE_MS, KEY_PREFIX, RedisRateLimiter, takeReply } from "../../../src/ratelimit/redis-limiter.ts";
import { RedisConnection } from "../../../src/redis/connection.ts";
import { memoryLogger } from "../../../src/log/logger.ts";
import { startRedis, type TestRedis } from "../../helpers/redis-server.ts";
import { waitFor } from "../../helpers/wait-for.ts";
import { createRng } from "../../../workers/text/prng.ts";

let redis: TestRedis;
const connections: RedisConnection[] = [];
const connect = (opts: ConstructorParameters<typeof RedisConnection>[1] = {}) => {
  const c = new RedisConnection(redis.url, opts);
  connections.push(c);
  return c;
};
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  for (const c of connections) c.close();
  await redis.stop();
});


describe("RedisRateLimiter", () => {
  test("three replicas' connections, 64 concurrent takes of 1 against 10 RPM: exactly 10; 64 × 250 tokens against 2,500 TPM: exactly 10", async () => {
    const replicas = [connect(), connect(), connect()].map((c) => new RedisRateLimiter(c));
    const rpm = await Promise.all(Array.from({ length: 64 }, (_, i) => replicas[i % 3]!.take("team:1:rpm", 10, 1)));
    expect(rpm.filter((r) => r.ok)).toHaveLength(10);
    const refused = rpm.find((r) => !r.ok) as TakeResult & { ok: false };
    expect(refused.remaining).toBe(0);
    // The wait is measured on Redis's clock: a unit every 6 s, less what has already refilled.
    expect(refused.retryAfterMs).toBeGreaterThan(0);
    expect(refused.retryAfterMs).toBeLessThanOrEqual(6000);
    const tpm = await Promise.all(Array.from({ length: 64 }, (_, i) => replicas[i % 3]!.take("team:1:tpm", 2500, 250)));
    expect(tpm.filter((r) => r.ok)).toHaveLength(10);
  });

  test("step for step the same answers as the memory limiter over 3,000 random takes, adjusts, peeks and limit changes", async () => {
    let t = 50_000_000;
    const mem = new MemoryRateLimiter(() => t);
    const red = new RedisRateLimiter(connect(), { now: () => t, prefix: "diff:" });
    const next = createRng(29);
    const pick = <T>(xs: T[]) => xs[Math.floor(next() * xs.length)]!;
    for (let i = 0; i < 3000; i++) {
      t += pick([0, 0, 1, 7, 999, 6000, 59_999, 120_000]);
      const key = pick(["a", "b", "c"]);
      const limit = pick([1, 7, 10, 60, 997, 40_000]);
      const amount = Math.floor(next() * limit * 1.2);
      const op = pick(["take", "take", "take", "adjust", "peek"]);
      const delta = next() < 0.5 ? amount : -amount;
      const call = (l: typeof mem | typeof red) => (op === "take" ? l.take(key, limit, amount) : op === "peek" ? l.peek(key, limit) : l.adjust(key, limit, delta));
      const [m, r] = await Promise.all([call(mem), call(red)]);
      if (!Bun.deepEquals(m, r)) throw new Error(`step ${i} (${op} ${key} limit ${limit} amount ${amount} at ${t}): memory ${JSON.stringify(m)}, redis ${JSON.stringify(r)}`);
    }
  });

  test("without a clock, Redis's own time refills the bucket", async () => {
    // 600,000 a minute is 10 a millisecond: emptied, it admits again within milliseconds of Redis's clock.
    const l = new RedisRateLimiter(connect());
    expect((await l.take("fast", 600_000, 600_000)).ok).toBe(true);
    const refused = await l.take("fast", 600_000, 100);
    expect(refused.ok).toBe(false);
    await waitFor(() => l.take("fast", 600_000, 100), { what: "100 units refilled by Redis's clock", until: (r) => r.ok });
  });

  test("keys carry the kiln:rl: prefix and expire a minute after the bucket is full again", async () => {
    const raw = await redis.client();
    const l = new RedisRateLimiter(connect());
    await l.take("team:9:rpm", 10, 5);
    expect(await raw.send("HGETALL", [`${KEY_PREFIX}team:9:rpm`])).toMatchObject({ level: "300000" });
    const ttl = Number(await raw.send("PTTL", [`${KEY_PREFIX}team:9:rpm`]));
    // Half empty at 10 a minute: full in 30 s, gone a minute later.
    expect(ttl).toBeGreaterThan(30_000 + GRACE_MS - 2000);
    expect(ttl).toBeLessThanOrEqual(30_000 + GRACE_MS);
    // Peeking at a bucket nobody took from writes nothing.
    await l.peek("team:9:tpm", 100);
    expect(await raw.send("EXISTS", [`${KEY_PREFIX}team:9:tpm`])).toBe(0);
  });

  test("a Redis that lost its script cache (restarted, flushed) gets the scripts again", async () => {
    const raw = await redis.client();
    const l = new RedisRateLimiter(connect());
    expect((await l.take("flush", 10, 1)).ok).toBe(true);
    await raw.send("SCRIPT", ["FLUSH"]);
    expect(await l.take("flush", 10, 1)).toMatchObject({ ok: true, remaining: 8 });
  });

  test("takeReply: -1 means the amount can never fit", () => {
    expect(takeReply([1, 4, 36_000, 0], 10)).toEqual({ ok: true, limit: 10, remaining: 4, resetMs: 36_000 });
    expect(takeReply([0, 4, 36_000, -1], 10)).toEqual({ ok: false, retryAfterMs: Infinity, limit: 10, remaining: 4, resetMs: 36_000 });
  });
});

describe("an unreachable Redis", () => {
  test("every call fails closed with 503 backend_unavailable, logged once; the next call after Redis is back works", async () => {
    const own = await startRedis();
    const logger = memoryLogger();
    const conn = new RedisConnection(own.url, { logger });
    try {
      const l = new RedisRateLimiter(conn);
      expect((await l.take("k", 10, 1)).ok).toBe(true);
      await own.kill();
      for (const call of [() => l.take("k", 10, 1), () => l.peek("k", 10), () => l.adjust("k", 10, 1)]) {
        const e = await call().then(() => null, (err: unknown) => err);
        expect(e).toBeInstanceOf(ApiError);
        expect(e).toMatchObject({ status: 503, code: "backend_unavailable", headers: { "retry-after": "5" } });
      }
      expect(logger.lines.filter((l) => l.msg === "redis unreachable: limited and billed requests get 503 until it answers")).toHaveLength(1);
      await own.restart();
      // Nothing was persisted: the restarted Redis starts every bucket full.
      expect(await l.take("k", 10, 1)).toMatchObject({ ok: true, remaining: 9 });
      expect(logger.lines.filter((l) => l.msg === "redis reachable again")).toHaveLength(1);
    } finally {
      conn.close();
      await own.stop();
    }
  });

  test("a Redis that stops answering (SIGSTOP) fails the call at the command timeout instead of hanging it", async () => {
    const own = await startRedis();
    const conn = new RedisConnection(own.url, { commandTimeoutMs: 300 });
    const l = new RedisRateLimiter(conn);
    const pid = Number(await (await own.client()).send("INFO", ["server"]).then((s: string) => /process_id:(\d+)/.exec(s)![1]));
    try {
      expect((await l.take("k", 10, 1)).ok).toBe(true);
      process.kill(pid, "SIGSTOP");
      const t0 = performance.now();
      await expect(l.take("k", 10, 1)).rejects.toMatchObject({ status: 503, code: "backend_unavailable" });
      expect(performance.now() - t0).toBeLessThan(5000);
      process.kill(pid, "SIGCONT");
      await waitFor(() => l.take("k", 10, 1).then((r) => r.ok, () => false), { what: "the limiter to answer after SIGCONT" });
    } finally {
      process.kill(pid, "SIGCONT");
      conn.close();
      await own.stop();
    }
  });
});
