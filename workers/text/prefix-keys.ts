// Pure addressing for the prefix cache: each prompt position's key (its token id, or for media rows a number from the
// medium's content), and each block's hash of the model, its scope and every position key up to the block's end.
import { createHash } from "node:crypto";
import type { MediaInput, PrefixScope } from "../../src/protocol/text.ts";

/** The namespace of blocks every scope shares: those inside an operator-declared public prefix. */
export const PUBLIC_NS = "public";

/** A SHA-256 digest of a medium's content (bytes, or pixels with their size, or samples with their rate). */
export function mediaDigest(input: MediaInput): Buffer {
  const h = createHash("sha256").update(input.kind);
  if (input.kind === "audio") h.update(`:${input.sampleRate}:`).update(new Uint8Array(input.samples.buffer, input.samples.byteOffset, input.samples.byteLength));
  else if ("bytes" in input.image) h.update(":bytes:").update(input.image.bytes);
  else h.update(`:rgb:${input.image.width}x${input.image.height}:`).update(input.image.rgb);
  return h.digest();
}

/** 2^52: media position keys stay exact integers in a double. */
const SPAN = 2 ** 52;

/**
 * One key per prompt position: the token id for text; for each of a medium's placeholder rows, a negative number from
 * its content digest and the row's offset, so an image's rows match only rows of the same bytes at the same offset.
 */
export function positionKeys(promptIds: readonly number[], media: readonly { at: number; tokens: number; digest: Buffer }[]): number[] {
  const keys = promptIds.slice();
  for (const m of media) {
    const base = m.digest.readUIntBE(0, 6) * 16 + (m.digest[6]! >> 4);
    for (let k = 0; k < m.tokens && m.at + k < keys.length; k++) keys[m.at + k] = -1 - ((base + k) % SPAN);
  }
  return keys;
}

/** Hash of a block: its parent's hash, its namespace and its position keys (hex, 128 bits of SHA-256). */
export function blockHash(parent: string, ns: string, keys: readonly number[]): string {
  const h = createHash("sha256").update(parent).update("\0").update(ns).update("\0");
  h.update(new Uint8Array(Float64Array.from(keys).buffer));
  return h.digest("hex").slice(0, 32);
}

/**
 * A sequence's path through the cache: its position keys (growing as it decodes) and its blocks' hashes, memoized.
 * The root hash is the model's identity (model, weight format, device), so equal prompts of other models never meet.
 */
export class PrefixPath {
  private readonly full: string[] = [];

  constructor(
    private readonly root: string,
    readonly keys: number[],
    readonly blockTokens: number,
    private readonly scope: PrefixScope,
  ) {}

  /** The namespace of this sequence's own blocks (its scope). */
  get ownNs(): string {
    return `scope:${this.scope.scope}`;
  }

  /** Opening positions within a declared public prefix. */
  get publicTokens(): number {
    return this.scope.publicTokens;
  }

  /** The namespace of a block ending at position `end`: public when it lies within the declared public prefix. */
  nsOf(end: number): string {
    return end <= this.scope.publicTokens ? PUBLIC_NS : this.ownNs;
  }

  /** The hash of full block i (positions [iB, (i+1)B)). */
  fullHash(i: number): string {
    const B = this.blockTokens;
    while (this.full.length <= i) {
      const j = this.full.length;
      if ((j + 1) * B > this.keys.length) throw new Error(`block ${j} is not whole (${this.keys.length} positions)`);
      this.full.push(blockHash(j === 0 ? this.root : this.full[j - 1]!, this.nsOf((j + 1) * B), this.keys.slice(j * B, (j + 1) * B)));
    }
    return this.full[i]!;
  }

  /** The hash of the first n positions of block i, as a partial block. */
  partialHash(i: number, n: number): string {
    const start = i * this.blockTokens;
    return blockHash(i === 0 ? this.root : this.fullHash(i - 1), this.nsOf(start + n), this.keys.slice(start, start + n));
  }
}
