// Token-bucket arithmetic in exact integers: pure functions the in-memory limiter runs and the Redis limiter's Lua
// (redis-limiter.ts) mirrors line for line, so both give the same answers to the unit.

/** A bucket's state as the rate-limit headers report it. */
export interface BucketState {
  /** Capacity: the per-minute limit. */
  limit: number;
  /** Whole units that could be taken now (0 while the bucket is in debt). */
  remaining: number;
  /** Milliseconds until the bucket is full again. */
  resetMs: number;
}

export type TakeResult = BucketState & ({ ok: true } | { ok: false; /** Milliseconds until `amount` fits; Infinity when it never can (amount > limit). */ retryAfterMs: number });

/** Units are kept ×60,000 (per-minute capacity refilled per millisecond), so refill and waits are exact integers. */
export const SCALE = 60_000;

/** A stored bucket: its scaled level (below 0 while in debt) and the millisecond it was last brought up to date. */
export interface Bucket {
  level: number;
  at: number;
}

/** The bucket at time `t` (whole ms): refilled at `limit` scaled units a millisecond, never above the capacity; a missing one is full. */
export function refill(b: Bucket | undefined, t: number, limit: number): Bucket {
  const cap = limit * SCALE;
  if (!b) return { level: cap, at: t };
  return { level: Math.min(cap, b.level + Math.max(0, t - b.at) * limit), at: Math.max(b.at, t) };
}

/** What the headers report of a scaled level. */
export function stateOf(level: number, limit: number): BucketState {
  return { limit, remaining: Math.max(0, Math.floor(level / SCALE)), resetMs: Math.ceil((limit * SCALE - level) / limit) };
}

/** Takes `amount` if it fits: the level after, and the answer (with the exact wait when it does not fit). */
export function takeFrom(level: number, limit: number, amount: number): { level: number; result: TakeResult } {
  const need = amount * SCALE;
  if (level >= need) return { level: level - need, result: { ok: true, ...stateOf(level - need, limit) } };
  const retryAfterMs = amount > limit ? Infinity : Math.ceil((need - level) / limit);
  return { level, result: { ok: false, retryAfterMs, ...stateOf(level, limit) } };
}

/** A level moved by `delta` units without refusal, never above the capacity. */
export function adjustLevel(level: number, limit: number, delta: number): number {
  return Math.min(limit * SCALE, level + delta * SCALE);
}

/** Whether a bucket last seen at `b` is full again at `t` (a full bucket may be forgotten: a missing one is full). */
export function fullAt(b: Bucket, t: number, limit: number): boolean {
  return b.level + Math.max(0, t - b.at) * limit >= limit * SCALE;
}

export function checkArgs(limit: number, amount: number): void {
  if (!Number.isSafeInteger(limit) || limit <= 0) throw new RangeError(`limit must be a positive integer, got ${limit}`);
  if (!Number.isSafeInteger(amount) || amount < 0) throw new RangeError(`amount must be a non-negative integer, got ${amount}`);
}
