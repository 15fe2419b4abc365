// The worker's prefix cache: prompt prefixes' KV in blocks of a fixed number of tokens, each addressed by a hash of
// everything before its end, so equal prefixes share blocks whoever sent them (within a scope); least recently used
// leaves go first when the byte budget is reached.
import type { BlockData, BlockShape } from "./kv-blocks.ts";
import type { KvData } from "./kv-cache.ts";
import { PUBLIC_NS, type PrefixPath } from "./prefix-keys.ts";

export interface CachedBlock extends BlockData {
  readonly hash: string;
  readonly parent: CachedBlock | null;
  readonly ns: string;
  /** Position keys of its tokens (a partial block holds fewer than the block size). */
  readonly keys: readonly number[];
  readonly bytes: number;
  /** Blocks that continue it; only whole blocks have any. */
  readonly children: Set<CachedBlock>;
}

/** The longest cached prefix of a path: its blocks in order, of which the first `length` positions are usable. */
export interface PrefixHit {
  blocks: CachedBlock[];
  length: number;
}

/** Reads positions [from, from + n) of the sequence's KV out of the batch that holds it. */
export type ExtractKv = (from: number, n: number) => KvData[];

/** How many leading keys two runs share. */
export function sharedRun(a: readonly number[], b: readonly number[], from = 0, limit = Infinity): number {
  const n = Math.min(a.length, b.length - from, limit);
  let i = 0;
  while (i < n && a[i] === b[from + i]) i++;
  return i;
}

export class PrefixCache {
  /** Every block by hash, least recently used first (a use moves a block to the end). */
  private readonly byHash = new Map<string, CachedBlock>();
  /** Blocks that start a prompt. */
  private readonly roots = new Set<CachedBlock>();
  /** Tensor layout, set by the first block stored (a worker serves one graph). */
  shape: BlockShape | null = null;
  layers = 0;
  bytes = 0;
  evictions = 0;

  constructor(
    readonly blockTokens: number,
    readonly maxBytes: number,
  ) {}

  get blocks(): number {
    return this.byHash.size;
  }

  /**
   * The longest cached prefix of the path's first `limit` positions: whole blocks by hash, then the longest run of a
   * cached continuation (whole or partial) the path shares, so a hit may end mid-block; a hit shorter than a block
   * counts as none. Every block used is touched.
   */
  lookup(path: PrefixPath, limit: number): PrefixHit {
    const B = this.blockTokens;
    const total = Math.min(limit, path.keys.length);
    const blocks: CachedBlock[] = [];
    let parent: CachedBlock | null = null;
    for (let i = 0; (i + 1) * B <= total; i++) {
      const block = this.byHash.get(path.fullHash(i));
      if (!block || block.keys.length !== B) break;
      blocks.push(block);
      parent = block;
    }
    let length = blocks.length * B;
    if (length < total) {
      let best: CachedBlock | null = null;
      let run = 0;
      for (const c of parent ? parent.children : this.roots) {
        // A public block's positions are reused only within this prompt's own public opening.
        const room = c.ns === PUBLIC_NS ? Math.min(total, path.publicTokens) - length : c.ns === path.ownNs ? total - length : 0;
        if (room <= 0) continue;
        const n = sharedRun(c.keys, path.keys, length, room);
        if (n > run) [best, run] = [c, n];
      }
      if (best) {
        blocks.push(best);
        length += run;
      }
    }
    // Less than a block (a template's opening markup, which every prompt shares) is not worth a join's copy.
    if (length < B) return { blocks: [], length: 0 };
    for (const b of blocks) this.touch(b);
    return { blocks, length };
  }

  /**
   * Stores the blocks of the path's first `upTo` positions that are not cached yet (whole blocks, and the tail as a
   * partial block), reading their KV with `extract`. Stops early when the budget cannot make room.
   */
  insert(path: PrefixPath, upTo: number, extract: ExtractKv): void {
    const B = this.blockTokens;
    let parent: CachedBlock | null = null;
    const whole = Math.floor(Math.min(upTo, path.keys.length) / B);
    for (let i = 0; i < whole; i++) {
      const hash = path.fullHash(i);
      const found = this.byHash.get(hash);
      if (found) this.touch(found);
      const block: CachedBlock | null = found ?? this.add(hash, parent, path.nsOf((i + 1) * B), path.keys.slice(i * B, (i + 1) * B), () => extract(i * B, B));
      if (!block) return;
      parent = block;
    }
    const n = Math.min(upTo, path.keys.length) - whole * B;
    if (n === 0) return;
    const tail = path.keys.slice(whole * B, whole * B + n);
    const ns = path.nsOf(whole * B + n);
    for (const c of parent ? parent.children : this.roots) {
      if (c.ns === ns && c.keys.length >= n && sharedRun(tail, c.keys) === n) return this.touch(c);
    }
    this.add(path.partialHash(whole, n), parent, ns, tail, () => extract(whole * B, n));
  }

  private add(hash: string, parent: CachedBlock | null, ns: string, keys: number[], read: () => KvData[]): CachedBlock | null {
    const kv = read();
    const bytes = kv.reduce((sum, t) => sum + t.byteLength, 0);
    if (!this.makeRoom(bytes, parent)) return null;
    const block: CachedBlock = { hash, parent, ns, keys, kv, tokens: keys.length, bytes, children: new Set() };
    const siblings = parent ? parent.children : this.roots;
    // A partial sibling this block extends is superseded by it (partial blocks have no children).
    for (const s of siblings) if (s.keys.length < keys.length && s.ns === ns && sharedRun(s.keys, keys) === s.keys.length) this.remove(s, false);
    siblings.add(block);
    this.byHash.set(hash, block);
    this.bytes += bytes;
    return block;
  }

  /** Evicts least recently used leaves (never `keep`) until `bytes` more fit; false when they cannot. */
  private makeRoom(bytes: number, keep: CachedBlock | null): boolean {
    if (bytes > this.maxBytes) return false;
    while (this.bytes + bytes > this.maxBytes) {
      let victim: CachedBlock | null = null;
      for (const b of this.byHash.values()) {
        if (b.children.size === 0 && b !== keep) {
          victim = b;
          break;
        }
      }
      if (!victim) return false;
      this.remove(victim, true);
    }
    return true;
  }

  private remove(block: CachedBlock, evicted: boolean): void {
    this.byHash.delete(block.hash);
    (block.parent ? block.parent.children : this.roots).delete(block);
    this.bytes -= block.bytes;
    if (evicted) this.evictions++;
  }

  private touch(block: CachedBlock): void {
    this.byHash.delete(block.hash);
    this.byHash.set(block.hash, block);
  }
}
