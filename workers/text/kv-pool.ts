// The host KV cache's buffers, reused: an arrangement, a grown cache or a prefill's past the engine lets go of goes
// back to a pool, and the next allocation of about its size takes it. Fresh memory costs most at its first touch (the
// kernel faults in and zeroes every page): on the 2-core VM this was measured on, writing 30 MB of new pages took
// 72–103 ms against 0.8–1.2 ms for pages already touched, so a 10-turn conversation's prefill spent more time faulting
// in its cached past (built from prefix-cache blocks, then grown for the new columns) than attending to it. Freed
// buffers handed back to the allocator are no better: its scavenger returns their pages to the kernel within moments.

/** float32 caches, or float16 ones carried as raw 16-bit words. */
export type PooledArray = Float32Array | Uint16Array;

/** A pooled buffer is taken for a request at most this many times its size (the rest is held unused meanwhile). */
const MAX_WASTE = 4;

/**
 * The size a new buffer gets: the next power of two (from 64 KiB). Caches grow (a conversation's past gains a turn,
 * a batch its columns), so a buffer made with room serves the next, larger requests too; the pages past what a user
 * writes are never touched, so the room costs address space, not memory.
 */
export function bufferSize(bytes: number): number {
  return bytes <= 65536 ? bytes : 2 ** Math.ceil(Math.log2(bytes));
}

export class KvBufferPool {
  /** Free buffers, least recently given first. */
  private readonly free: ArrayBuffer[] = [];
  /** Buffers this pool made: only these come back to it (an ONNX Runtime output, a prefix-cache block never do). */
  private readonly made = new WeakSet<ArrayBuffer>();
  private held = 0;
  /** Takes served from the pool and from fresh memory, for tests and probes. */
  readonly counts = { reused: 0, fresh: 0 };

  constructor(readonly maxBytes: number) {}

  /** Bytes of the free buffers held. */
  get bytes(): number {
    return this.held;
  }

  /**
   * An array of `length` elements whose first `zeroed` are zero; the rest may hold what an earlier user wrote (a
   * caller that allocates room it does not use yet clears it before use). A view of the smallest pooled buffer that
   * fits (at most 4× the request), or of a new one of bufferSize.
   */
  take(float16: boolean, length: number, zeroed = length): PooledArray {
    const bytes = length * (float16 ? 2 : 4);
    let best = -1;
    for (let i = 0; i < this.free.length; i++) {
      const size = this.free[i]!.byteLength;
      if (size >= bytes && size <= bytes * MAX_WASTE && (best < 0 || size < this.free[best]!.byteLength)) best = i;
    }
    if (best < 0 || bytes === 0) {
      this.counts.fresh++;
      const buffer = new ArrayBuffer(bufferSize(bytes));
      this.made.add(buffer);
      return float16 ? new Uint16Array(buffer, 0, length) : new Float32Array(buffer, 0, length);
    }
    const [buffer] = this.free.splice(best, 1) as [ArrayBuffer];
    this.held -= buffer.byteLength;
    this.counts.reused++;
    const out = float16 ? new Uint16Array(buffer, 0, length) : new Float32Array(buffer, 0, length);
    out.fill(0, 0, Math.min(zeroed, length));
    return out;
  }

  /**
   * Takes back a buffer nothing reads any more; false when it is not this pool's to keep (made elsewhere, already
   * free, or detached), and the caller frees it as before. Over the budget, the least recently given go first.
   */
  give(buffer: ArrayBufferLike): boolean {
    if (!(buffer instanceof ArrayBuffer) || !this.made.has(buffer) || buffer.detached || this.free.includes(buffer)) return false;
    if (buffer.byteLength > this.maxBytes) return false;
    this.free.push(buffer);
    this.held += buffer.byteLength;
    while (this.held > this.maxBytes) {
      const old = this.free.shift()!;
      this.held -= old.byteLength;
      this.made.delete(old);
      old.transfer(0);
    }
    return true;
  }

  /** Frees every held buffer. */
  clear(): void {
    for (const b of this.free.splice(0)) {
      this.made.delete(b);
      b.transfer(0);
    }
    this.held = 0;
  }
}

const DEFAULT_MB = 64;

/**
 * MiB of free KV buffers a worker keeps for reuse (KILN_KV_POOL_MB; 0 turns reuse off). 64 by default: a conversation's
 * turn over a 1,000-token past needs about 50 of the bench model's; what the pool holds beyond what is taken again
 * only adds to the peak (16 clients at once, test/load/ab-server.ts: +39 MB at 64, +65 MB at 256, against 1,495 MB off).
 */
export function kvPoolBytes(env: Record<string, string | undefined> = process.env): number {
  const mb = Number(env.KILN_KV_POOL_MB ?? DEFAULT_MB);
  return (Number.isFinite(mb) && mb >= 0 ? mb : DEFAULT_MB) * 1024 * 1024;
}

/** The worker's pool (each worker thread has its own module instance). */
export const kvPool = new KvBufferPool(kvPoolBytes());
