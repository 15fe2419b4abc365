// Turns the workers' cumulative prefix-cache figures into counter increments that never go down (a restarted worker
// counts again from zero) and per-model sums of what the live workers hold now.
import type { PrefixCacheStats } from "../protocol/text.ts";

/** The figures that only grow within one worker's life, so they feed counters. */
export const CACHE_COUNTERS = ["evictions", "promptTokens", "hitTokens", "prefillTokens"] as const;
export type CacheCounts = Record<(typeof CACHE_COUNTERS)[number], number>;

/**
 * What `next` adds to the counters after `prev`, the same worker's previous report. Any figure lower than before means
 * the worker started again from zero, so the whole of `next` is new; so is a first report.
 */
export function cacheDelta(prev: PrefixCacheStats | undefined, next: PrefixCacheStats): CacheCounts {
  const fresh = !prev || CACHE_COUNTERS.some((k) => next[k] < prev[k]);
  const out = {} as CacheCounts;
  for (const k of CACHE_COUNTERS) out[k] = fresh ? next[k] : next[k] - prev[k];
  return out;
}

/** A worker as the pool lists it: worker ids are per pool, so the model is part of its name. */
export interface LiveWorker {
  workerId: number;
  model: string;
}

const keyOf = (w: LiveWorker) => `${w.model}\u0000${w.workerId}`;

export class PrefixCacheTally {
  /** Each worker's last report. */
  private readonly last = new Map<string, LiveWorker & { stats: PrefixCacheStats }>();
  /** Per model, every increment since this process started. */
  private readonly totals = new Map<string, CacheCounts>();

  /** Takes a worker's report; returns what it adds to its model's counters. */
  record(workerId: number, model: string, stats: PrefixCacheStats): CacheCounts {
    const key = keyOf({ workerId, model });
    const delta = cacheDelta(this.last.get(key)?.stats, stats);
    this.last.set(key, { workerId, model, stats: { ...stats } });
    const total = this.totals.get(model) ?? { evictions: 0, promptTokens: 0, hitTokens: 0, prefillTokens: 0 };
    for (const k of CACHE_COUNTERS) total[k] += delta[k];
    this.totals.set(model, total);
    return delta;
  }

  /**
   * Blocks and bytes held now, per model that ever reported (0 once none of its workers holds any), summed over the
   * workers `live` lists; a worker it no longer lists (exited, replaced) is forgotten. `live` null: every worker counts.
   */
  held(live: LiveWorker[] | null): Map<string, { blocks: number; bytes: number }> {
    if (live) {
      const alive = new Set(live.map(keyOf));
      for (const key of this.last.keys()) if (!alive.has(key)) this.last.delete(key);
    }
    const out = new Map<string, { blocks: number; bytes: number }>();
    for (const model of this.totals.keys()) out.set(model, { blocks: 0, bytes: 0 });
    for (const w of this.last.values()) {
      const sum = out.get(w.model)!;
      sum.blocks += w.stats.blocks;
      sum.bytes += w.stats.bytes;
    }
    return out;
  }

  /** Per model: hit tokens over the prompt tokens that looked the cache up, since this process started (0 when none did). */
  hitRatios(): Map<string, number> {
    return new Map([...this.totals].map(([model, t]) => [model, t.promptTokens ? t.hitTokens / t.promptTokens : 0]));
  }
}
