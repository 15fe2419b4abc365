// The prefix-cache bookkeeping behind /metrics: cumulative worker figures become increments that never go down,
// a restarted worker is a new baseline from zero, and only live workers' blocks and bytes count.
import { describe, expect, test } from "bun:test";
import { cacheDelta, PrefixCacheTally } from "../../../src/metrics/prefix-cache-tally.ts";
import type { PrefixCacheStats } from "../../../src/protocol/text.ts";

const stats = (o: Partial<PrefixCacheStats> = {}): PrefixCacheStats => ({ blocks: 0, bytes: 0, evictions: 0, promptTokens: 0, hitTokens: 0, prefillTokens: 0, ...o });

describe("cacheDelta", () => {
  test("a first report is new in full; later ones add what grew; blocks and bytes are not counters", () => {
    expect(cacheDelta(undefined, stats({ blocks: 9, evictions: 1, promptTokens: 80, hitTokens: 48, prefillTokens: 32 }))).toEqual({ evictions: 1, promptTokens: 80, hitTokens: 48, prefillTokens: 32 });
    const prev = stats({ blocks: 9, evictions: 1, promptTokens: 80, hitTokens: 48, prefillTokens: 32 });
    expect(cacheDelta(prev, stats({ blocks: 2, evictions: 3, promptTokens: 100, hitTokens: 48, prefillTokens: 52 }))).toEqual({ evictions: 2, promptTokens: 20, hitTokens: 0, prefillTokens: 20 });
  });

  test("any figure lower than before is a worker that started again from zero: the whole report is new", () => {
    const prev = stats({ evictions: 5, promptTokens: 500, hitTokens: 100, prefillTokens: 400 });
    // Its prompt tokens already passed the old count, but its hits did not: still a restart, counted from zero.
    expect(cacheDelta(prev, stats({ evictions: 5, promptTokens: 600, hitTokens: 16, prefillTokens: 584 }))).toEqual({ evictions: 5, promptTokens: 600, hitTokens: 16, prefillTokens: 584 });
    expect(cacheDelta(prev, stats())).toEqual({ evictions: 0, promptTokens: 0, hitTokens: 0, prefillTokens: 0 });
  });
});

describe("PrefixCacheTally", () => {
  test("per-model counters add the workers' own increments; the ratio is hits over prompt tokens since the start", () => {
    const t = new PrefixCacheTally();
    expect(t.record(1, "a-v1", stats({ promptTokens: 64, hitTokens: 0, prefillTokens: 64 }))).toEqual({ evictions: 0, promptTokens: 64, hitTokens: 0, prefillTokens: 64 });
    expect(t.record(1, "a-v1", stats({ promptTokens: 128, hitTokens: 48, prefillTokens: 80 }))).toEqual({ evictions: 0, promptTokens: 64, hitTokens: 48, prefillTokens: 16 });
    // Another worker of the same model, and the same worker id in another pool (another model): their own baselines.
    expect(t.record(2, "a-v1", stats({ promptTokens: 32, hitTokens: 16 }))).toEqual({ evictions: 0, promptTokens: 32, hitTokens: 16, prefillTokens: 0 });
    expect(t.record(1, "b-v1", stats({ promptTokens: 10 }))).toEqual({ evictions: 0, promptTokens: 10, hitTokens: 0, prefillTokens: 0 });
    expect(t.hitRatios()).toEqual(new Map([["a-v1", 64 / 160], ["b-v1", 0]]));
  });

  test("a restarted worker counts from zero again and the ratio keeps what the old one served", () => {
    const t = new PrefixCacheTally();
    t.record(1, "a-v1", stats({ promptTokens: 100, hitTokens: 50 }));
    expect(t.record(1, "a-v1", stats({ promptTokens: 20, hitTokens: 0 }))).toEqual({ evictions: 0, promptTokens: 20, hitTokens: 0, prefillTokens: 0 });
    expect(t.hitRatios().get("a-v1")).toBe(50 / 120);
  });

  test("blocks and bytes: the sum over the live workers; one no longer listed stops counting, its model reads 0", () => {
    const t = new PrefixCacheTally();
    t.record(1, "a-v1", stats({ blocks: 3, bytes: 300 }));
    t.record(2, "a-v1", stats({ blocks: 4, bytes: 400 }));
    t.record(1, "b-v1", stats({ blocks: 1, bytes: 100 }));
    t.record(1, "a-v1", stats({ blocks: 5, bytes: 500 }));
    expect(t.held(null)).toEqual(new Map([["a-v1", { blocks: 9, bytes: 900 }], ["b-v1", { blocks: 1, bytes: 100 }]]));
    const live = [{ workerId: 2, model: "a-v1" }, { workerId: 3, model: "a-v1" }];
    expect(t.held(live)).toEqual(new Map([["a-v1", { blocks: 4, bytes: 400 }], ["b-v1", { blocks: 0, bytes: 0 }]]));
    // Forgotten for good: listing it again later does not bring its old figures back.
    expect(t.held([...live, { workerId: 1, model: "a-v1" }]).get("a-v1")).toEqual({ blocks: 4, bytes: 400 });
    expect(t.held([]).get("a-v1")).toEqual({ blocks: 0, bytes: 0 });
  });
});
