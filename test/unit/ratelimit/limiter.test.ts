// The limiter's contract, run against both implementations from one body: the in-memory one and the Redis one (a real
// redis-server; the test's clock is passed into its scripts), which must give the same answers to the unit.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { MemoryRateLimiter, type RateLimiter } from "../../../src/ratelimit/limiter.ts";
import { RedisRateLimiter } from "../../../src/ratelimit/redis-limiter.ts";
import { RedisConnection } from "../../../src/redis/connection.ts";
import { startRedis, type TestRedis } from "../../helpers/redis-server.ts";

function clock(start = 1_000_000) {
  let t = start;
  return { now: () => t, advance: (ms: number) => void (t += ms) };
}

let redis: TestRedis;
const connections: RedisConnection[] = [];
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  for (const c of connections) c.close();
  await redis.stop();
});

let run = 0;
/** Each test gets its own key prefix, so the shared server starts every test empty. */
function redisLimiter(now?: () => number): RateLimiter {
  const conn = new RedisConnection(redis.url);
  connections.push(conn);
  return new RedisRateLimiter(conn, { now, prefix: `test${++run}:` });
}

const IMPLEMENTATIONS: [string, (now?: () => number) => RateLimiter][] = [
  ["MemoryRateLimiter", (now) => new MemoryRateLimiter(now)],
  ["RedisRateLimiter", redisLimiter],
];

describe.each(IMPLEMENTATIONS)("%s (token buckets, exact integers)", (_name, make) => {
  test("a full bucket admits `limit` at once, then refuses with the exact wait until one unit refills", async () => {
    const c = clock();
    const l = make(c.now);
    for (let i = 0; i < 10; i++) expect((await l.take("a", 10, 1)).ok).toBe(true);
    const refused = await l.take("a", 10, 1);
    // 10 per minute refill one unit every 6 s.
    expect(refused).toEqual({ ok: false, retryAfterMs: 6000, limit: 10, remaining: 0, resetMs: 60_000 });
    c.advance(5999);
    expect(await l.take("a", 10, 1)).toMatchObject({ ok: false, retryAfterMs: 1 });
    c.advance(1);
    expect(await l.take("a", 10, 1)).toMatchObject({ ok: true, remaining: 0 });
  });

  test("waiting exactly retryAfterMs always suffices, for awkward limits too", async () => {
    const c = clock();
    const l = make(c.now);
    for (const limit of [7, 13, 997, 40_000]) {
      const key = `k${limit}`;
      while ((await l.take(key, limit, Math.ceil(limit / 3))).ok);
      const r = await l.take(key, limit, Math.ceil(limit / 3));
      if (r.ok) throw new Error("expected a refusal");
      c.advance(r.retryAfterMs - 1);
      expect((await l.take(key, limit, Math.ceil(limit / 3))).ok).toBe(false);
      c.advance(1);
      expect((await l.take(key, limit, Math.ceil(limit / 3))).ok).toBe(true);
    }
  });

  test("a refusal takes nothing; an amount above the limit can never fit", async () => {
    const l = make(clock().now);
    expect(await l.take("t", 100, 60)).toMatchObject({ ok: true, remaining: 40 });
    expect(await l.take("t", 100, 41)).toMatchObject({ ok: false, remaining: 40 });
    expect(await l.take("t", 100, 40)).toMatchObject({ ok: true, remaining: 0 });
    expect(await l.take("u", 100, 101)).toMatchObject({ ok: false, retryAfterMs: Infinity, remaining: 100 });
  });

  test("64 racing takes against a limit of 10 admit exactly 10", async () => {
    const l = make(clock().now);
    const results = await Promise.all(Array.from({ length: 64 }, () => l.take("race", 10, 1)));
    expect(results.filter((r) => r.ok)).toHaveLength(10);
    // Token reservations race the same way: 64 × 250 against 2,500 tokens.
    const tokens = await Promise.all(Array.from({ length: 64 }, () => l.take("race-t", 2500, 250)));
    expect(tokens.filter((r) => r.ok)).toHaveLength(10);
  });

  test("adjust reconciles: unused reservation back, extra use into debt", async () => {
    const c = clock();
    const l = make(c.now);
    await l.take("t", 1000, 800);
    await l.adjust("t", 1000, 500);
    expect(await l.peek("t", 1000)).toMatchObject({ remaining: 700 });
    await l.adjust("t", 1000, 5000);
    expect(await l.peek("t", 1000)).toMatchObject({ remaining: 1000, resetMs: 0 });
    await l.adjust("t", 1000, -1600);
    expect(await l.peek("t", 1000)).toMatchObject({ remaining: 0, resetMs: 96_000 });
    const r = await l.take("t", 1000, 1);
    expect(r).toMatchObject({ ok: false, retryAfterMs: 36_060 });
  });

  test("buckets are per key; a lowered limit clamps at once; peek of an unseen key is full", async () => {
    const l = make(clock().now);
    await l.take("a", 5, 5);
    expect((await l.take("b", 5, 1)).ok).toBe(true);
    expect(await l.peek("c", 30)).toEqual({ limit: 30, remaining: 30, resetMs: 0 });
    await l.take("d", 100, 10);
    expect(await l.peek("d", 20)).toMatchObject({ limit: 20, remaining: 20 });
  });

  test("the largest limits stay exact (capacity 6·10¹³ scaled units, debt beyond it)", async () => {
    const c = clock();
    const l = make(c.now);
    const max = 1_000_000_000;
    expect(await l.take("big", max, max - 1)).toEqual({ ok: true, limit: max, remaining: 1, resetMs: 60_000 });
    await l.adjust("big", max, -3 * max);
    expect(await l.peek("big", max)).toEqual({ limit: max, remaining: 0, resetMs: 240_000 });
    // 3·limit of debt is 1.8·10¹⁴ scaled units, refilled at 10⁹ a millisecond: one unit fits after exactly 180 s.
    c.advance(179_999);
    expect(await l.take("big", max, 1)).toMatchObject({ ok: false, retryAfterMs: 1, remaining: 0 });
    c.advance(1);
    expect(await l.take("big", max, 1)).toMatchObject({ ok: true, remaining: 0 });
    c.advance(60_000);
    expect(await l.peek("big", max)).toEqual({ limit: max, remaining: max, resetMs: 0 });
  });

  test("bad arguments are refused", async () => {
    const l = make();
    expect(l.take("x", 0, 1)).rejects.toThrow(RangeError);
    expect(l.take("x", 10, -1)).rejects.toThrow(RangeError);
    expect(l.take("x", 10, 1.5)).rejects.toThrow(RangeError);
  });
});
