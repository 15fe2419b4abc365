// Position keys and block hashes: text positions are their ids, media rows come from content, hashes chain.
import { describe, expect, test } from "bun:test";
import type { MediaInput } from "../../../../src/protocol/text.ts";
import { blockHash, mediaDigest, PrefixPath, positionKeys, PUBLIC_NS } from "../../../../workers/text/prefix-keys.ts";

const image = (rgb: number[]): MediaInput => ({ kind: "image", at: 1, tokens: 3, image: { rgb: Uint8Array.from(rgb), width: 1, height: 1 } });

describe("positionKeys", () => {
  test("text positions keep their ids; a medium's rows become negative keys from its content and offset", () => {
    const a = mediaDigest(image([1, 2, 3]));
    const keys = positionKeys([7, 99, 99, 99, 8], [{ at: 1, tokens: 3, digest: a }]);
    expect(keys[0]).toBe(7);
    expect(keys[4]).toBe(8);
    expect(keys.slice(1, 4).every((k) => k < 0 && Number.isSafeInteger(k))).toBe(true);
    expect(new Set(keys.slice(1, 4)).size).toBe(3);
    expect(positionKeys([7, 99, 99, 99, 8], [{ at: 1, tokens: 3, digest: mediaDigest(image([1, 2, 3])) }])).toEqual(keys);
    expect(positionKeys([7, 99, 99, 99, 8], [{ at: 1, tokens: 3, digest: mediaDigest(image([1, 2, 4])) }]).slice(1, 4)).not.toEqual(keys.slice(1, 4));
  });

  test("digests tell kinds, sizes and rates apart", () => {
    const rgb = Uint8Array.of(1, 2, 3, 4, 5, 6);
    const wide = mediaDigest({ kind: "image", at: 0, tokens: 1, image: { rgb, width: 2, height: 1 } });
    const tall = mediaDigest({ kind: "image", at: 0, tokens: 1, image: { rgb, width: 1, height: 2 } });
    expect(wide.equals(tall)).toBe(false);
    const samples = Float32Array.of(0.5, -0.5);
    const at16 = mediaDigest({ kind: "audio", at: 0, tokens: 1, samples, sampleRate: 16000 });
    const at8 = mediaDigest({ kind: "audio", at: 0, tokens: 1, samples, sampleRate: 8000 });
    expect(at16.equals(at8)).toBe(false);
  });
});

describe("PrefixPath", () => {
  const scope = { scope: "team:1", publicTokens: 16 };
  test("a block's hash covers every position before its end, its namespace and the root", () => {
    const keys = Array.from({ length: 40 }, (_, i) => i);
    const p = new PrefixPath("model-a", keys, 16, scope);
    const q = new PrefixPath("model-a", [...keys.slice(0, 16), 999, ...keys.slice(17)], 16, scope);
    expect(p.fullHash(0)).toBe(q.fullHash(0));
    expect(p.fullHash(1)).not.toBe(q.fullHash(1));
    expect(new PrefixPath("model-b", keys, 16, scope).fullHash(0)).not.toBe(p.fullHash(0));
    expect(new PrefixPath("model-a", keys, 16, { scope: "team:2", publicTokens: 16 }).fullHash(0)).toBe(p.fullHash(0));
    expect(new PrefixPath("model-a", keys, 16, { scope: "team:2", publicTokens: 16 }).fullHash(1)).not.toBe(p.fullHash(1));
    expect(p.nsOf(16)).toBe(PUBLIC_NS);
    expect(p.nsOf(17)).toBe("scope:team:1");
    expect(p.partialHash(2, 8)).toBe(blockHash(p.fullHash(1), "scope:team:1", keys.slice(32, 40)));
    expect(() => p.fullHash(2)).toThrow(/not whole/);
  });
});
