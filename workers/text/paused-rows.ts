// Background rows (flex, batch) the engine took out of its batch: preempted so waiting interactive work gets their rows,
// or sitting out a step in which an interactive prompt is prefilled. Each keeps its own copy of its KV (the running
// batch is compacted in place) and its sequence's whole state, so it resumes exactly where it stopped.
import { type BatchKv, type BatchRow, rebuildBatch } from "./kv-cache.ts";
import type { CacheOps } from "./model-runner.ts";
import type { Sequence } from "./sequence.ts";

interface Paused {
  seq: Sequence;
  kv: BatchKv<unknown>;
}

export class PausedRows {
  /** First paused, first resumed. */
  private rows: Paused[] = [];

  /** `cache`: a device runner's own arrangement (absent: host arrays, copied here). */
  constructor(private readonly cache: CacheOps<unknown> | undefined) {}

  get length(): number {
    return this.rows.length;
  }

  /** Their KV batches, which every arrangement of the running batch must keep alive. */
  kvs(): BatchKv<unknown>[] {
    return this.rows.map((p) => p.kv);
  }

  find(seqId: string): Sequence | undefined {
    return this.rows.find((p) => p.seq.id === seqId)?.seq;
  }

  /**
   * Copies rows `picked` of the running batch `kv` (row r runs seqs[r]) out, one batch each, before the batch drops
   * them. `retained`: the other batches still live (a device runner frees any batch not named).
   */
  async pause(kv: BatchKv<unknown>, seqs: readonly Sequence[], picked: readonly number[], retained: BatchKv<unknown>[]): Promise<void> {
    for (const row of picked) {
      const own = this.cache
        ? (await this.cache.arrange([{ kv, row }], [kv, ...retained, ...this.kvs()])).kv!
        : rebuildBatch([{ kv: kv as BatchKv, row }])!;
      this.rows.push({ seq: seqs[row]!, kv: own });
    }
  }

  /** The first `n` paused rows leave, as rows to join the next batch (their sequences, and row 0 of their own batch). */
  resume(n: number): { seqs: Sequence[]; rows: BatchRow<unknown>[] } {
    const out = this.rows.splice(0, n);
    return { seqs: out.map((p) => p.seq), rows: out.map((p) => ({ kv: p.kv, row: 0 })) };
  }

  /** Paused sequences that were cancelled leave (their batches are dropped at the next arrangement). */
  dropCancelled(): Sequence[] {
    const gone = this.rows.filter((p) => p.seq.cancelled).map((p) => p.seq);
    if (gone.length) this.rows = this.rows.filter((p) => !p.seq.cancelled);
    return gone;
  }
}
