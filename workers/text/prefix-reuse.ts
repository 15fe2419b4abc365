// The engine's side of the prefix cache: gives each sequence its path, finds what a newcomer can take from the cache,
// assembles the past of a prefill from cached blocks, stores what prefills and finished sequences computed, and keeps
// the figures the worker reports.
import type { MediaInput, PrefixCacheStats, PrefixScope } from "../../src/protocol/text.ts";
import { type BlockShape, extractColumns, pastFromBlocks, shapeOf } from "./kv-blocks.ts";
import type { BatchKv, KvData } from "./kv-cache.ts";
import type { PrefixCache, PrefixHit } from "./prefix-cache.ts";
import { mediaDigest, PrefixPath, positionKeys } from "./prefix-keys.ts";

/** What the engine keeps per sequence for the cache. */
export interface PrefixState {
  path: PrefixPath;
  /** The cached prefix found when it was admitted (its blocks stay readable however the cache evicts meanwhile). */
  hit: PrefixHit | null;
}

/** Host copies of a row's positions [from, from + n) (each tensor's [heads, n, headDim]), from a cache on a device. */
export type KvReader = (kv: BatchKv<unknown>, row: number, from: number, n: number) => Promise<KvData[]>;

interface QueuedRecord {
  state: PrefixState;
  kv: BatchKv<unknown>;
  row: number;
  upTo: number;
}

export class PrefixReuse {
  private readonly counts = { promptTokens: 0, hitTokens: 0, prefillTokens: 0 };
  /** Full-block hashes a prefill under way will store: a newcomer that would compute one of them waits for it. */
  private readonly pending = new Map<string, number>();
  /** Records waiting for flush (after the step's first tokens are out; a device cache is read asynchronously). */
  private queued: QueuedRecord[] = [];

  /**
   * `cache` null: the figures are kept (prefill tokens) but nothing is cached. `root`: the model's identity. `reader`:
   * for a runner whose cache the host cannot read in place; records then wait for flush. `align`: hits are cut to a
   * multiple of it (ModelRunner.passAlign).
   */
  constructor(
    private readonly cache: PrefixCache | null,
    private readonly root: string,
    private readonly reader?: KvReader,
    private readonly align = 1,
  ) {}

  /** A new sequence's state, or null when it does not use the cache (off, or added without a scope). */
  open(promptIds: number[], media: readonly MediaInput[], scope: PrefixScope | undefined): PrefixState | null {
    if (!this.cache || !scope) return null;
    const keys = positionKeys(promptIds, media.map((m) => ({ at: m.at, tokens: m.tokens, digest: mediaDigest(m) })));
    return { path: new PrefixPath(this.root, keys, this.cache.blockTokens, scope), hit: null };
  }

  /**
   * Looks a queued sequence's prompt up (at most promptLength − 1 positions: the last one is run for its logits).
   * Returns the positions it could take from the cache; `keep` records the hit for its prefill.
   */
  usable(state: PrefixState | null, promptLength: number, keep = false): number {
    if (!state || !this.cache) return 0;
    const found = this.cache.lookup(state.path, promptLength - 1);
    const length = Math.floor(found.length / this.align) * this.align;
    const hit = length >= this.cache.blockTokens ? { blocks: found.blocks, length } : { blocks: [], length: 0 };
    if (keep) state.hit = hit;
    return hit.length;
  }

  /** Whether the sequence's first block to compute is one a prefill under way is computing (then it should wait). */
  waitsForPending(state: PrefixState | null, usable: number): boolean {
    if (!state || this.pending.size === 0) return false;
    const B = state.path.blockTokens;
    const i = Math.floor(usable / B);
    return (i + 1) * B <= state.path.keys.length && this.pending.has(state.path.fullHash(i));
  }

  /** Marks (delta +1) or unmarks (−1) the whole blocks of a prompt being prefilled. */
  markPending(state: PrefixState | null, delta: 1 | -1): void {
    if (!state) return;
    const B = state.path.blockTokens;
    for (let i = 0; (i + 1) * B <= state.path.keys.length; i++) {
      const h = state.path.fullHash(i);
      const n = (this.pending.get(h) ?? 0) + delta;
      if (n > 0) this.pending.set(h, n);
      else this.pending.delete(h);
    }
  }

  /**
   * The past of a prefill whose row r takes the first lens[r] positions from its recorded hit (0: none), or null when
   * no row takes any; `room`: spare columns for the pass's new ones (pastFromBlocks).
   */
  past(states: (PrefixState | null)[], lens: number[], room = 0): BatchKv | null {
    if (!lens.some((n) => n > 0)) return null;
    const rows = states.map((s, r) => ({ blocks: lens[r]! > 0 ? s!.hit!.blocks : [], len: lens[r]! }));
    const kv = pastFromBlocks(rows, this.cache!.layers, this.cache!.shape!, room);
    states.forEach((s, r) => {
      if (s) s.hit = null;
      this.counts.hitTokens += lens[r]!;
    });
    return kv;
  }

  /** Counts a prompt admitted with the cache's help (or without), for the hit rate. */
  admitted(state: PrefixState | null, promptLength: number): void {
    if (state) this.counts.promptTokens += promptLength;
  }

  /** Counts prompt positions a prefill pass ran (padding excluded). */
  prefilled(positions: number): void {
    this.counts.prefillTokens += positions;
  }

  /**
   * Stores the blocks of the positions row `row` of `kv` holds for the sequence, not cached yet, at the next flush:
   * the step calls it after its first tokens are out and before it lets go of `kv`.
   */
  record(state: PrefixState | null, kv: BatchKv<unknown>, row: number): void {
    if (!state || !this.cache) return;
    const upTo = Math.min(kv.lens[row] ?? 0, state.path.keys.length);
    if (upTo > 0) this.queued.push({ state, kv, row, upTo });
  }

  /**
   * Stores the queued records: from a host cache the row's positions are copied out; from a device's, those past
   * the row's cached whole blocks are read to the host, then inserted.
   */
  async flush(): Promise<void> {
    const queued = this.queued;
    this.queued = [];
    for (const { state, kv, row, upTo } of queued) {
      if (!this.reader) {
        this.store(state, kv as BatchKv, row, upTo, 0);
        continue;
      }
      const B = this.cache!.blockTokens;
      const start = Math.floor(this.cache!.lookup(state.path, upTo).length / B) * B;
      if (start >= upTo) continue;
      const n = upTo - start;
      const { dims } = kv.tensors[0] as { dims: readonly number[] };
      try {
        const data = await this.reader!(kv, row, start, n);
        const host: BatchKv = { tensors: data.map((d) => ({ data: d, dims: [1, dims[1]!, n, dims[3]!] })), lens: [n], length: n };
        this.store(state, host, 0, upTo, start);
      } catch {
        // The cache only saves work: a record that cannot be read is not stored, and the sequence is unaffected.
      }
    }
  }

  /** Inserts the sequence's blocks up to `upTo`; `kv`'s row holds its positions from `offset` on. */
  private store(state: PrefixState, kv: BatchKv, row: number, upTo: number, offset: number): void {
    const cache = this.cache!;
    if (!cache.shape) {
      cache.shape = shapeOf(kv);
      cache.layers = kv.tensors.length;
    } else if (!sameShape(cache.shape, shapeOf(kv)) || cache.layers !== kv.tensors.length) return;
    cache.insert(state.path, upTo, (from, n) => extractColumns(kv, row, from - offset, n));
  }

  /** A token fed to the model after the prompt: its position joins the sequence's path. */
  fed(state: PrefixState | null, token: number): void {
    state?.path.keys.push(token);
  }

  stats(): PrefixCacheStats {
    return { blocks: this.cache?.blocks ?? 0, bytes: this.cache?.bytes ?? 0, evictions: this.cache?.evictions ?? 0, ...this.counts };
  }
}

const sameShape = (a: BlockShape, b: BlockShape) => a.heads === b.heads && a.headDim === b.headDim && a.float16 === b.float16;
