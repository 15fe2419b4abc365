// The block store: longest hits (whole blocks, then a partial run), scopes, superseded partial blocks, LRU eviction of
// leaves within the byte budget.
import { describe, expect, test } from "bun:test";
import { PrefixCache, sharedRun } from "../../../../workers/text/prefix-cache.ts";
import { PrefixPath } from "../../../../workers/text/prefix-keys.ts";

const B = 4;
/** One float per position (its key), so a block of n positions is 4n bytes and its content is checkable. */
const extractFrom = (keys: number[]) => (from: number, n: number) => [Float32Array.from(keys.slice(from, from + n))];
const path = (keys: number[], scope = "team:1", publicTokens = 0) => new PrefixPath("m", keys, B, { scope, publicTokens });
const seq = (n: number, seed = 0) => Array.from({ length: n }, (_, i) => i + 1 + seed * 100);

function store(cache: PrefixCache, keys: number[], upTo = keys.length, scope = "team:1", publicTokens = 0) {
  cache.insert(path(keys, scope, publicTokens), upTo, extractFrom(keys));
}

describe("PrefixCache", () => {
  test("a hit takes whole blocks by hash, then the longest shared run of a continuation", () => {
    const cache = new PrefixCache(B, 1 << 20);
    store(cache, seq(10));
    expect(cache.blocks).toBe(3);
    const hit = cache.lookup(path([...seq(7), 99, 98]), 100);
    expect(hit.length).toBe(7);
    expect(hit.blocks.map((b) => b.tokens)).toEqual([4, 4]);
    expect(Array.from(hit.blocks[1]!.kv[0]!)).toEqual([5, 6, 7, 8]);
    // The limit caps it (a prompt keeps its last position to run).
    expect(cache.lookup(path(seq(10)), 9).length).toBe(9);
    expect(cache.lookup(path([5, ...seq(9)]), 100).length).toBe(0);
  });

  test("another scope finds nothing; public blocks are found by any scope only within its public opening", () => {
    const cache = new PrefixCache(B, 1 << 20);
    store(cache, seq(12), 12, "team:1", 8);
    expect(cache.lookup(path(seq(12), "team:2"), 100).length).toBe(0);
    expect(cache.lookup(path(seq(12), "team:2", 8), 100).length).toBe(8);
    expect(cache.lookup(path(seq(12), "team:2", 6), 100).length).toBe(6);
    expect(cache.lookup(path(seq(12), "team:1", 8), 100).length).toBe(12);
  });

  test("a longer block supersedes the partial one it extends; a covered tail adds nothing", () => {
    const cache = new PrefixCache(B, 1 << 20);
    store(cache, seq(6));
    const before = cache.bytes;
    store(cache, seq(5));
    expect(cache.bytes).toBe(before);
    store(cache, seq(8));
    expect(cache.blocks).toBe(2);
    expect(cache.bytes).toBe(8 * 4);
    expect(cache.evictions).toBe(0);
  });

  test("least recently used leaves go first, parents after their children, within the budget", () => {
    const cache = new PrefixCache(B, 4 * B * 4);
    store(cache, seq(8, 1));
    store(cache, seq(8, 2));
    cache.lookup(path(seq(8, 1)), 100);
    store(cache, seq(4, 3));
    // seq 2's second block was the oldest leaf.
    expect(cache.evictions).toBe(1);
    expect(cache.lookup(path(seq(8, 2)), 100).length).toBe(4);
    expect(cache.lookup(path(seq(8, 1)), 100).length).toBe(8);
    store(cache, seq(8, 4));
    expect(cache.bytes).toBeLessThanOrEqual(4 * B * 4);
    expect(cache.lookup(path(seq(8, 4)), 100).length).toBe(8);
    // A block larger than the whole budget is never stored.
    const tiny = new PrefixCache(B, 8);
    store(tiny, seq(8));
    expect(tiny.blocks).toBe(0);
  });

  test("sharedRun counts equal leading keys from an offset, within a limit", () => {
    expect(sharedRun([1, 2, 3], [0, 1, 2, 4], 1)).toBe(2);
    expect(sharedRun([1, 2, 3], [1, 2, 3], 0, 2)).toBe(2);
    expect(sharedRun([1], [], 0)).toBe(0);
  });
});

describe("PrefixCache short hits", () => {
  test("a shared run shorter than a block (a template's opening) is no hit", () => {
    const cache = new PrefixCache(B, 1 << 20);
    store(cache, seq(10));
    expect(cache.lookup(path([1, 2, 3, 77, 78]), 100)).toEqual({ blocks: [], length: 0 });
    expect(cache.lookup(path([1, 2, 3, 4, 78]), 100).length).toBe(4);
  });
});
