// The counting behind per-team rate limits: one small interface (a shared store can back it when kiln runs as
// several replicas) and the in-process implementation, token buckets in exact integer arithmetic.

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

export interface RateLimiter {
  /**
   * Takes `amount` from bucket `key` (capacity `limit` per minute, refilled continuously) if it fits, else nothing.
   * Atomic: racing takes never together pass the limit.
   */
  take(key: string, limit: number, amount: number): Promise<TakeResult>;
  /** Moves a bucket by `delta` units without refusing: positive gives back, negative takes more (a bucket may go into debt). */
  adjust(key: string, limit: number, delta: number): Promise<void>;
  peek(key: string, limit: number): Promise<BucketState>;
}

/** Units are kept ×60,000 (per-minute capacity refilled per millisecond), so refill and waits are exact integers. */
const SCALE = 60_000;
/** Full buckets are forgotten (a missing bucket is a full one) once the map holds this many. */
const SWEEP_AT = 10_000;

interface Bucket {
  /** Scaled level: between -∞ (debt) and limit × SCALE. */
  level: number;
  at: number;
  limit: number;
}

/** Token buckets in this process's memory. Each call runs to its end in one turn of the event loop, so it is atomic. */
export class MemoryRateLimiter implements RateLimiter {
  private readonly buckets = new Map<string, Bucket>();

  constructor(private readonly now: () => number = () => Date.now()) {}

  private bucket(key: string, limit: number): Bucket {
    const t = Math.floor(this.now());
    const cap = limit * SCALE;
    let b = this.buckets.get(key);
    if (!b) {
      if (this.buckets.size >= SWEEP_AT) this.sweep(t);
      b = { level: cap, at: t, limit };
      this.buckets.set(key, b);
    }
    // Refill at `limit` scaled units per millisecond, never above the (possibly changed) capacity.
    b.level = Math.min(cap, b.level + Math.max(0, t - b.at) * limit);
    b.at = Math.max(b.at, t);
    b.limit = limit;
    return b;
  }

  private state(b: Bucket): BucketState {
    const cap = b.limit * SCALE;
    return { limit: b.limit, remaining: Math.max(0, Math.floor(b.level / SCALE)), resetMs: Math.ceil((cap - b.level) / b.limit) };
  }

  private sweep(t: number): void {
    for (const [key, b] of this.buckets) if (b.level + Math.max(0, t - b.at) * b.limit >= b.limit * SCALE) this.buckets.delete(key);
  }

  async take(key: string, limit: number, amount: number): Promise<TakeResult> {
    checkArgs(limit, amount);
    const b = this.bucket(key, limit);
    const need = amount * SCALE;
    if (b.level >= need) {
      b.level -= need;
      return { ok: true, ...this.state(b) };
    }
    const retryAfterMs = amount > limit ? Infinity : Math.ceil((need - b.level) / limit);
    return { ok: false, retryAfterMs, ...this.state(b) };
  }

  async adjust(key: string, limit: number, delta: number): Promise<void> {
    checkArgs(limit, Math.abs(delta));
    const b = this.bucket(key, limit);
    b.level = Math.min(limit * SCALE, b.level + delta * SCALE);
  }

  async peek(key: string, limit: number): Promise<BucketState> {
    checkArgs(limit, 0);
    const b = this.buckets.get(key);
    if (!b) return { limit, remaining: limit, resetMs: 0 };
    return this.state(this.bucket(key, limit));
  }
}

function checkArgs(limit: number, amount: number): void {
  if (!Number.isSafeInteger(limit) || limit <= 0) throw new RangeError(`limit must be a positive integer, got ${limit}`);
  if (!Number.isSafeInteger(amount) || amount < 0) throw new RangeError(`amount must be a non-negative integer, got ${amount}`);
}
