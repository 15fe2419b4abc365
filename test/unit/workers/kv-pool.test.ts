// The worker's pool of host KV buffers: what it reuses, what it zeroes, what it refuses and what it frees.
import { describe, expect, test } from "bun:test";
import { bufferSize, KvBufferPool, kvPoolBytes } from "../../../workers/text/kv-pool.ts";

const detached = (b: ArrayBufferLike) => (b as ArrayBuffer & { detached: boolean }).detached;

describe("KvBufferPool", () => {
  test("a new buffer gets the next power of two above 64 KiB, exactly the request below; the view is the request", () => {
    expect([bufferSize(1000), bufferSize(65536), bufferSize(65537), bufferSize(3 << 20)]).toEqual([1000, 65536, 131072, 4 << 20]);
    const pool = new KvBufferPool(1 << 30);
    const a = pool.take(false, 100_000);
    expect([a.length, a.buffer.byteLength, a instanceof Float32Array, a.every((x) => x === 0)]).toEqual([100_000, 524_288, true, true]);
    const h = pool.take(true, 10);
    expect([h instanceof Uint16Array, h.length, h.buffer.byteLength]).toEqual([true, 10, 20]);
    expect(pool.counts).toEqual({ reused: 0, fresh: 2 });
  });

  test("a buffer given back serves the next request it fits: its first `zeroed` values are zero, the rest as left", () => {
    const pool = new KvBufferPool(1 << 30);
    const a = pool.take(false, 40_000);
    a.fill(5);
    expect(pool.give(a.buffer)).toBe(true);
    expect(pool.bytes).toBe(262_144);
    const b = pool.take(false, 50_000, 30_000);
    expect(b.buffer).toBe(a.buffer);
    expect([b.length, b[0], b[29_999], b[30_000], b[39_999], pool.bytes]).toEqual([50_000, 0, 0, 5, 5, 0]);
    expect(pool.counts).toEqual({ reused: 1, fresh: 1 });
  });

  test("the smallest free buffer that fits is taken, never one more than 4× the request", () => {
    const pool = new KvBufferPool(1 << 30);
    // 512 KiB, 2 MiB and 4 MiB buffers.
    const [small, mid, big] = [100_000, 300_000, 1_000_000].map((n) => pool.take(false, n).buffer);
    for (const x of [big!, small!, mid!]) pool.give(x);
    const same = (a: ArrayBufferLike, b: ArrayBufferLike | undefined) => a === b;
    // 800 KB: the 2 MiB one (the 4 MiB one fits too, but is larger).
    expect(same(pool.take(false, 200_000).buffer, mid)).toBe(true);
    // 240 KB: the 512 KiB one.
    expect(same(pool.take(false, 60_000).buffer, small)).toBe(true);
    // 200 KB: only the 4 MiB one is free, over 4× the request, so a new buffer.
    const fresh = pool.take(false, 50_000);
    expect([same(fresh.buffer, big), fresh.buffer.byteLength, pool.counts.fresh]).toEqual([false, 262_144, 4]);
    expect(same(pool.take(false, 900_000).buffer, big)).toBe(true);
  });

  test("refuses buffers it did not make, one it holds already, and detached ones; the budget drops the least recently given", () => {
    const pool = new KvBufferPool(600_000);
    expect(pool.give(new ArrayBuffer(1024))).toBe(false);
    const [a, b, c] = [0, 1, 2].map(() => pool.take(false, 60_000).buffer);
    expect([pool.give(a!), pool.give(a!)]).toEqual([true, false]);
    pool.give(b!);
    expect([pool.bytes, detached(a!)]).toEqual([524_288, false]);
    // A third 256 KiB buffer is over 600,000 bytes: the first given goes, freed.
    pool.give(c!);
    expect([pool.bytes, detached(a!), detached(b!), detached(c!)]).toEqual([524_288, true, false, false]);
    expect(pool.give(a!)).toBe(false);
    pool.clear();
    expect([pool.bytes, detached(b!), detached(c!)]).toEqual([0, true, true]);
  });

  test("KILN_KV_POOL_MB sets the budget; 0 keeps nothing; nonsense falls back to 64", () => {
    expect([kvPoolBytes({}), kvPoolBytes({ KILN_KV_POOL_MB: "256" }), kvPoolBytes({ KILN_KV_POOL_MB: "0" }), kvPoolBytes({ KILN_KV_POOL_MB: "x" })]).toEqual([
      64 << 20, 256 << 20, 0, 64 << 20,
    ]);
    const none = new KvBufferPool(0);
    const a = none.take(false, 10);
    expect([none.give(a.buffer), detached(a.buffer)]).toEqual([false, false]);
  });
});
