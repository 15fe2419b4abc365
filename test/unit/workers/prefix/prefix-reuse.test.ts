// The engine's side of the prefix cache: hits cut to a runner's pass alignment, and records from a cache the host reads
// asynchronously (a device's), queued until flush, reading only what is not cached yet.
import { describe, expect, test } from "bun:test";
import { extractColumns } from "../../../../workers/text/kv-blocks.ts";
import type { BatchKv } from "../../../../workers/text/kv-cache.ts";
import { PrefixCache } from "../../../../workers/text/prefix-cache.ts";
import { PrefixReuse } from "../../../../workers/text/prefix-reuse.ts";

const TEAM = { scope: "team", publicTokens: 0 };
const ids = (n: number, from = 0) => Array.from({ length: n }, (_, i) => from + i);

/** One row of `len` positions whose value at (head, position) is 100·head + position. */
function row(len: number): BatchKv {
  const data = new Float32Array(2 * len);
  for (let h = 0; h < 2; h++) for (let p = 0; p < len; p++) data[h * len + p] = 100 * h + p;
  return { tensors: [{ data, dims: [1, 2, len, 1] }], lens: [len], length: len };
}

describe("PrefixReuse", () => {
  test("a hit is cut to a multiple of the runner's pass alignment; a cut below one block is no hit", async () => {
    const reuse = new PrefixReuse(new PrefixCache(16, 1 << 20), "m", undefined, 31);
    const prompt = ids(80);
    reuse.record(reuse.open(prompt, [], TEAM), row(80), 0);
    await reuse.flush();
    expect(reuse.usable(reuse.open(prompt, [], TEAM), 80)).toBe(62);
    expect(reuse.usable(reuse.open([...ids(40), 999], [], TEAM), 41)).toBe(31);
    // 20 shared positions: a 16-token block, cut to 0 by the alignment.
    expect(reuse.usable(reuse.open([...ids(20), 999], [], TEAM), 21)).toBe(0);
    const plain = new PrefixReuse(new PrefixCache(16, 1 << 20), "m");
    plain.record(plain.open(prompt, [], TEAM), row(80), 0);
    await plain.flush();
    expect(plain.usable(plain.open([...ids(40), 999], [], TEAM), 41)).toBe(40);
  });

  test("a host cache's record is stored at flush, not before: the step sends its tokens first", async () => {
    const reuse = new PrefixReuse(new PrefixCache(16, 1 << 20), "m");
    const kv = row(40);
    reuse.record(reuse.open(ids(40), [], TEAM), kv, 0);
    expect([reuse.stats().blocks, reuse.usable(reuse.open(ids(41), [], TEAM), 41)]).toEqual([0, 0]);
    await reuse.flush();
    expect([reuse.stats().blocks, reuse.usable(reuse.open(ids(41), [], TEAM), 41)]).toEqual([3, 40]);
    // The blocks are copies: the batch's buffer may be reused once the step lets go of it.
    kv.tensors[0]!.data.fill(-1);
    const probe = reuse.open(ids(41), [], TEAM);
    reuse.usable(probe, 41, true);
    expect(Array.from(reuse.past([probe], [40])!.tensors[0]!.data)).toEqual(Array.from(extractColumns(row(40), 0, 0, 40)[0]!));
  });

  test("with a reader, records wait for flush, which reads only the positions past the cached whole blocks", async () => {
    const reads: [number, number][] = [];
    const reuse = new PrefixReuse(new PrefixCache(16, 1 << 20), "m", async (kv, r, from, n) => {
      reads.push([from, n]);
      return extractColumns(kv as BatchKv, r, from, n);
    });
    const first = ids(40);
    reuse.record(reuse.open(first, [], TEAM), row(40), 0);
    expect(reuse.stats().blocks).toBe(0);
    await reuse.flush();
    expect(reads).toEqual([[0, 40]]);
    expect(reuse.stats().blocks).toBe(3);
    // A longer sequence over the same 40: two whole blocks are cached, so it reads from 32 on.
    const state = reuse.open(ids(70), [], TEAM);
    reuse.record(state, row(70), 0);
    await reuse.flush();
    expect(reads[1]).toEqual([32, 38]);
    // What was read is what a fresh copy holds: the hit's past equals the row's first 69 positions.
    const probe = reuse.open(ids(70), [], TEAM);
    expect(reuse.usable(probe, 70, true)).toBe(69);
    const past = reuse.past([probe], [69])!;
    expect(Array.from(past.tensors[0]!.data)).toEqual(Array.from(extractColumns(row(70), 0, 0, 69)[0]!));
  });

  test("a record whose read fails is dropped: nothing is stored and flush does not throw", async () => {
    const reuse = new PrefixReuse(new PrefixCache(16, 1 << 20), "m", async () => {
      throw new Error("device lost");
    });
    reuse.record(reuse.open(ids(40), [], TEAM), row(40), 0);
    await reuse.flush();
    expect(reuse.stats().blocks).toBe(0);
    expect(reuse.usable(reuse.open(ids(40), [], TEAM), 40)).toBe(0);
  });
});
