import { describe, expect, test } from "bun:test";
import { MemoryRateLimiter } from "../../../src/ratelimit/limiter.ts";

function clock(start = 1_000_000) {
  let t = start;
  return { now: () => t, advance: (ms: number) => void (t += ms) };
}

describe("MemoryRateLimiter (token buckets, exact integers)", () => {
  test("a full bucket admits `limit` at once, then refuses with the exact wait until one unit refills", async () => {
    const c = clock();
    const l = new MemoryRateLimiter(c.now);
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
    const l = new MemoryRateLimiter(c.now);
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
    const l = new MemoryRateLimiter(clock().now);
    expect(await l.take("t", 100, 60)).toMatchObject({ ok: true, remaining: 40 });
    expect(await l.take("t", 100, 41)).toMatchObject({ ok: false, remaining: 40 });
    expect(await l.take("t", 100, 40)).toMatchObject({ ok: true, remaining: 0 });
    expect(await l.take("u", 100, 101)).toMatchObject({ ok: false, retryAfterMs: Infinity, remaining: 100 });
  });

  test("64 racing takes against a limit of 10 admit exactly 10", async () => {
    const l = new MemoryRateLimiter(clock().now);
    const results = await Promise.all(Array.from({ length: 64 }, () => l.take("race", 10, 1)));
    expect(results.filter((r) => r.ok)).toHaveLength(10);
    // Token reservations race the same way: 64 × 250 against 2,500 tokens.
    const tokens = await Promise.all(Array.from({ length: 64 }, () => l.take("race-t", 2500, 250)));
    expect(tokens.filter((r) => r.ok)).toHaveLength(10);
  });

  test("adjust reconciles: unused reservation back, extra use into debt", async () => {
    const c = clock();
    const l = new MemoryRateLimiter(c.now);
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
    const l = new MemoryRateLimiter(clock().now);
    await l.take("a", 5, 5);
    expect((await l.take("b", 5, 1)).ok).toBe(true);
    expect(await l.peek("c", 30)).toEqual({ limit: 30, remaining: 30, resetMs: 0 });
    await l.take("d", 100, 10);
    expect(await l.peek("d", 20)).toMatchObject({ limit: 20, remaining: 20 });
  });

  test("bad arguments are refused", async () => {
    const l = new MemoryRateLimiter();
    expect(l.take("x", 0, 1)).rejects.toThrow(RangeError);
    expect(l.take("x", 10, -1)).rejects.toThrow(RangeError);
    expect(l.take("x", 10, 1.5)).rejects.toThrow(RangeError);
  });
});
