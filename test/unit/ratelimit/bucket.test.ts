// The token-bucket arithmetic both limiters share (the Redis one in Lua): refill, state, take, adjust, fullness.
import { describe, expect, test } from "bun:test";
import { adjustLevel, checkArgs, fullAt, refill, SCALE, stateOf, takeFrom } from "../../../src/ratelimit/bucket.ts";

describe("bucket arithmetic", () => {
  test("a missing bucket is full; refill adds limit scaled units a millisecond up to the capacity, and time never runs back", () => {
    expect(refill(undefined, 500, 10)).toEqual({ level: 10 * SCALE, at: 500 });
    expect(refill({ level: 0, at: 1000 }, 7000, 10)).toEqual({ level: 60_000, at: 7000 });
    expect(refill({ level: 0, at: 1000 }, 61_000 + 5, 10)).toEqual({ level: 600_000, at: 61_005 });
    expect(refill({ level: 5, at: 1000 }, 900, 10)).toEqual({ level: 5, at: 1000 });
    // A lowered limit clamps to its capacity at once.
    expect(refill({ level: 100 * SCALE, at: 0 }, 0, 20).level).toBe(20 * SCALE);
  });

  test("state: whole units left (none in debt) and the whole milliseconds until full, rounded up", () => {
    expect(stateOf(10 * SCALE, 10)).toEqual({ limit: 10, remaining: 10, resetMs: 0 });
    expect(stateOf(SCALE - 1, 10)).toEqual({ limit: 10, remaining: 0, resetMs: 54_001 });
    expect(stateOf(-SCALE, 10)).toEqual({ limit: 10, remaining: 0, resetMs: 66_000 });
  });

  test("take: all or nothing, with the exact wait; an amount above the limit waits forever", () => {
    expect(takeFrom(3 * SCALE, 10, 3)).toEqual({ level: 0, result: { ok: true, limit: 10, remaining: 0, resetMs: 60_000 } });
    expect(takeFrom(3 * SCALE, 10, 4)).toEqual({ level: 3 * SCALE, result: { ok: false, retryAfterMs: 6000, limit: 10, remaining: 3, resetMs: 42_000 } });
    expect(takeFrom(10 * SCALE, 10, 11).result).toMatchObject({ ok: false, retryAfterMs: Infinity });
    expect(takeFrom(10 * SCALE, 10, 0).result).toMatchObject({ ok: true, remaining: 10 });
  });

  test("adjust never passes the capacity but may go into debt; fullAt says when a bucket may be forgotten", () => {
    expect(adjustLevel(9 * SCALE, 10, 5)).toBe(10 * SCALE);
    expect(adjustLevel(0, 10, -3)).toBe(-3 * SCALE);
    expect(fullAt({ level: 0, at: 0 }, 59_999, 10)).toBe(false);
    expect(fullAt({ level: 0, at: 0 }, 60_000, 10)).toBe(true);
  });

  test("limits are positive integers, amounts non-negative integers", () => {
    expect(() => checkArgs(0, 1)).toThrow(RangeError);
    expect(() => checkArgs(10, -1)).toThrow("amount must be a non-negative integer, got -1");
    expect(() => checkArgs(10, 0)).not.toThrow();
  });
});
