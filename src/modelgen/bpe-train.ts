// Learns byte-level BPE merges from a corpus, deterministically (ties broken by token ids), with a lazy max-heap.
import { bytesToTokenString, BYTE_TO_CHAR, pretokenize } from "./byte-level.ts";

export interface BpeResult {
  /** id → token string; ids 0..255 are the single bytes, then one new token per learned merge. */
  tokens: string[];
  /** Merges in rank order, as pairs of token strings. */
  merges: [string, string][];
}

/** Pair key: both ids fit in 26 bits, so the key stays an exact double. */
const KEY = 1 << 26;

/** Max-heap on (count desc, key asc). */
class PairHeap {
  private counts: number[] = [];
  private keys: number[] = [];
  get size() {
    return this.keys.length;
  }
  private above(i: number, j: number) {
    const ci = this.counts[i]!, cj = this.counts[j]!;
    return ci > cj || (ci === cj && this.keys[i]! < this.keys[j]!);
  }
  private swap(i: number, j: number) {
    [this.counts[i], this.counts[j]] = [this.counts[j]!, this.counts[i]!];
    [this.keys[i], this.keys[j]] = [this.keys[j]!, this.keys[i]!];
  }
  push(count: number, key: number) {
    this.counts.push(count);
    this.keys.push(key);
    for (let i = this.keys.length - 1; i > 0; ) {
      const p = (i - 1) >> 1;
      if (!this.above(i, p)) break;
      this.swap(i, p);
      i = p;
    }
  }
  pop(): [number, number] {
    const top: [number, number] = [this.counts[0]!, this.keys[0]!];
    const lastC = this.counts.pop()!, lastK = this.keys.pop()!;
    if (this.keys.length) {
      this.counts[0] = lastC;
      this.keys[0] = lastK;
      for (let i = 0; ; ) {
        const l = 2 * i + 1, r = l + 1;
        let m = i;
        if (l < this.keys.length && this.above(l, m)) m = l;
        if (r < this.keys.length && this.above(r, m)) m = r;
        if (m === i) break;
        this.swap(i, m);
        i = m;
      }
    }
    return top;
  }
}

/**
 * Learns at most `maxNewTokens` new tokens (merges whose result is not yet a token still count as merges but
 * add no token). Stops early when no pair occurs at least twice.
 */
export function trainBpe(corpus: readonly string[], maxNewTokens: number): BpeResult {
  // Unique pre-tokens with their frequencies; words are sorted so the result does not depend on Map order.
  const freq = new Map<string, number>();
  for (const doc of corpus) for (const piece of pretokenize(doc)) {
    const s = bytesToTokenString(piece);
    freq.set(s, (freq.get(s) ?? 0) + 1);
  }
  const words = [...freq.keys()].sort().map((w) => ({ symbols: [...w], count: freq.get(w)! }));
  return learnMerges(BYTE_TO_CHAR, words, maxNewTokens);
}

/** A distinct word of the training text as its starting symbols (each a base token), and how often it occurs. */
export interface TrainingWord {
  symbols: string[];
  count: number;
}

/**
 * The merge loop behind every kiln tokenizer: starting from `base` tokens, repeatedly merges the most frequent
 * adjacent pair (ties to the smallest ids) until `maxNewTokens` tokens are added or no pair occurs `minCount` times.
 * Words must be given in a fixed order; a merged token's string is the concatenation of its pair's.
 */
export function learnMerges(base: readonly string[], wordList: readonly TrainingWord[], maxNewTokens: number, minCount = 2): BpeResult {
  const tokens = base.slice();
  const idOf = new Map(tokens.map((t, i) => [t, i]));
  const merges: [string, string][] = [];
  const words: number[][] = wordList.map((w) =>
    w.symbols.map((c) => {
      const id = idOf.get(c);
      if (id === undefined) throw new Error(`learnMerges: symbol ${JSON.stringify(c)} is not a base token`);
      return id;
    }),
  );
  const wordFreq = wordList.map((w) => w.count);

  const pairCount = new Map<number, number>();
  const pairWords = new Map<number, Set<number>>();
  const addPairs = (wi: number, sign: number, touched: Set<number>) => {
    const w = words[wi]!;
    for (let i = 0; i + 1 < w.length; i++) {
      const k = w[i]! * KEY + w[i + 1]!;
      pairCount.set(k, (pairCount.get(k) ?? 0) + sign * wordFreq[wi]!);
      if (sign > 0) {
        let set = pairWords.get(k);
        if (!set) pairWords.set(k, (set = new Set()));
        set.add(wi);
      }
      touched.add(k);
    }
  };
  const initial = new Set<number>();
  for (let wi = 0; wi < words.length; wi++) addPairs(wi, 1, initial);
  const heap = new PairHeap();
  for (const k of initial) heap.push(pairCount.get(k)!, k);

  let added = 0;
  while (added < maxNewTokens && heap.size) {
    const [count, key] = heap.pop();
    const current = pairCount.get(key) ?? 0;
    if (count !== current) {
      if (current > 0) heap.push(current, key);
      continue;
    }
    if (count < minCount) break;
    const a = Math.floor(key / KEY), b = key % KEY;
    const merged = tokens[a]! + tokens[b]!;
    let id = idOf.get(merged);
    if (id === undefined) {
      id = tokens.length;
      tokens.push(merged);
      idOf.set(merged, id);
      added++;
    }
    merges.push([tokens[a]!, tokens[b]!]);
    const touched = new Set<number>();
    for (const wi of [...pairWords.get(key)!].sort((x, y) => x - y)) {
      const w = words[wi]!;
      if (!w.some((t, i) => t === a && w[i + 1] === b)) continue;
      addPairs(wi, -1, touched);
      const out: number[] = [];
      for (let i = 0; i < w.length; i++) {
        if (w[i] === a && w[i + 1] === b) {
          out.push(id);
          i++;
        } else out.push(w[i]!);
      }
      words[wi] = out;
      addPairs(wi, 1, touched);
    }
    pairWords.delete(key);
    // Decreased counts are fixed lazily when popped; increased or new ones need a fresh entry now.
    for (const k of [...touched].sort((x, y) => x - y)) {
      const c = pairCount.get(k)!;
      if (c > 0 && k !== key) heap.push(c, k);
    }
  }
  return { tokens, merges };
}
