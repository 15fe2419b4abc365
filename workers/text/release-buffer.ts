// Frees the memory behind an ONNX Runtime output the worker has finished reading, now rather than at the collector's
// next pass: onnxruntime-node hands every output back in a new buffer (9.7 MB of logits a step at 16 rows of a
// 151,936-token vocabulary), and Bun's collector frees those late, so they piled up as resident memory under load.
// Measured on a bare loop of 200 sixteen-row one-token passes of the bench model: peak RSS 600 → 537 MB; on the
// server under 16 clients (test/load/ab-server.ts, 3 pairs): peak 1703 → 1588 MB, and 209 → 229 tok/s.
import { kvPool } from "./kv-pool.ts";

/** Detaches `view`'s whole ArrayBuffer (ES2024 transfer), which frees it; every view of it reads as empty afterwards. */
export function releaseBuffer(view: ArrayBufferView | undefined): void {
  const buffer = view?.buffer as (ArrayBuffer & { detached?: boolean; transfer?: (length: number) => ArrayBuffer }) | undefined;
  if (!(buffer instanceof ArrayBuffer) || buffer.detached || typeof buffer.transfer !== "function") return;
  buffer.transfer(0);
}

/** A pass's logits once every row has sampled from them, and a scored prompt's positions once they are reported. */
export function releaseLogits(out: { logits: Float32Array; positions?: Float32Array } | null | undefined): void {
  if (!out) return;
  releaseBuffer(out.logits);
  releaseBuffer(out.positions);
}

/**
 * The host caches a batch arrangement let go of: every buffer behind a tensor of `replaced` that none of `kept` uses is
 * given back to the KV pool (kv-pool.ts) or, when it is not the pool's, freed at once: the former batch after a rebuild
 * (one copy is 55 MB at 16 rows of the bench model's 141 columns, 786 MB at 2,000), a newcomer's prefill cache once
 * copied in, a cache grown away from. Left to the collector, several were resident at once. Returns the bytes let go
 * of. Buffers are compared, not tensors: compacted rows and in-place joins are views of the cache they came from.
 */
export function releaseReplacedKv(replaced: readonly ({ tensors: readonly unknown[] } | null)[], kept: readonly ({ tensors: readonly unknown[] } | null)[]): number {
  const keep = new Set<ArrayBufferLike>();
  for (const kv of kept)
    for (const t of kv?.tensors ?? []) {
      const data = hostData(t);
      if (data) keep.add(data.buffer);
    }
  let freed = 0;
  for (const kv of replaced)
    for (const t of kv?.tensors ?? []) {
      const data = hostData(t);
      if (!data || keep.has(data.buffer) || (data.buffer as ArrayBuffer & { detached?: boolean }).detached) continue;
      freed += data.buffer.byteLength;
      // Once: other tensors may be views of the same buffer.
      keep.add(data.buffer);
      // A buffer the KV pool made goes back to it for the next cache; any other is freed.
      if (!kvPool.give(data.buffer)) releaseBuffer(data);
    }
  return freed;
}

/** A host cache tensor's array ({ data, dims }); undefined for a device runner's tensors. */
function hostData(t: unknown): ArrayBufferView | undefined {
  const data = (t as { data?: unknown } | null)?.data;
  return data instanceof Float32Array || data instanceof Uint16Array ? data : undefined;
}
