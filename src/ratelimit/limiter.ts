// The counting behind per-team rate limits: one small interface (Redis backs it when kiln runs as several replicas:
// redis-limiter.ts) and the in-process implementation, token buckets in exact integer arithmetic (bucket.ts).
import { adjustLevel, type Bucket, type BucketState, checkArgs, fullAt, refill, stateOf, type TakeResult, takeFrom } from "./bucket.ts";

export type { BucketState, TakeResult } from "./bucket.ts";


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

/** Full buckets are forgotten (a missing bucket is a full one) once the map holds this many. */
const SWEEP_AT = 10_000;

interface Stored extends Bucket {
  limit: number;
}

/** Token buckets in this process's memory. Each call runs to its end in one turn of the event loop, so it is atomic. */
export class MemoryRateLimiter implements RateLimiter {
  private readonly buckets = new Map<string, Stored>();

  constructor(private readonly now: () => number = () => Date.now()) {}

  /** The bucket brought up to date (created full when missing) and kept, with the limit it was last used at. */
  private bucket(key: string, limit: number): Stored {
    const t = Math.floor(this.now());
    const seen = this.buckets.get(key);
    if (!seen && this.buckets.size >= SWEEP_AT) this.sweep(t);
    const b = { ...refill(seen, t, limit), limit };
    this.buckets.set(key, b);
    return b;
  }

  private sweep(t: number): void {
    for (const [key, b] of this.buckets) if (fullAt(b, t, b.limit)) this.buckets.delete(key);
  }

  async take(key: string, limit: number, amount: number): Promise<TakeResult> {
    checkArgs(limit, amount);
    const b = this.bucket(key, limit);
    const { level, result } = takeFrom(b.level, limit, amount);
    b.level = level;
    return result;
  }

  async adjust(key: string, limit: number, delta: number): Promise<void> {
    checkArgs(limit, Math.abs(delta));
    const b = this.bucket(key, limit);
    b.level = adjustLevel(b.level, limit, delta);
  }

  async peek(key: string, limit: number): Promise<BucketState> {
    checkArgs(limit, 0);
    if (!this.buckets.has(key)) return { limit, remaining: limit, resetMs: 0 };
    return stateOf(this.bucket(key, limit).level, limit);
  }
}
