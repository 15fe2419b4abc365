// Pure planning for a KV cache kept on the device: capacities, and how a batch is assembled from runs of rows.

/**
 * Columns to allocate for rows that need `need` of them: the need plus max(32, need / 8) spare columns, rounded up to
 * a multiple of 32, so a cache grows (one copy on the device) every few dozen steps; never past `limit` (the context
 * length) unless the need itself is.
 */
export function capacityFor(need: number, limit: number): number {
  const padded = Math.ceil((need + Math.max(32, Math.ceil(need / 8))) / 32) * 32;
  return Math.max(need, Math.min(padded, limit));
}

/** A stretch of consecutive new rows that come from one source batch (rows `rows` of source `source`). */
export interface Run {
  source: number;
  rows: number[];
}

/**
 * Splits the new batch's rows (each naming its source batch and its row there) into runs of the same source, in
 * order: each run is one Gather on the device, and the runs are stacked in turn.
 */
export function runsOf(picks: { source: number; row: number }[]): Run[] {
  const runs: Run[] = [];
  for (const p of picks) {
    const last = runs.at(-1);
    if (last && last.source === p.source) last.rows.push(p.row);
    else runs.push({ source: p.source, rows: [p.row] });
  }
  return runs;
}

/** Whether the picks are every row of one source batch of `size` rows, in order (nothing to do). */
export function isWhole(picks: { source: number; row: number }[], size: number): boolean {
  return picks.length === size && picks.every((p, i) => p.source === 0 && p.row === i);
}

/**
 * The prompts of a left-padded prefill (input ids [batch, width], attention mask 1 on real tokens): each row's real
 * tokens, in order. The device runner prefills them one by one (its attention reads right-padded rows).
 */
export function unpadRows(inputIds: BigInt64Array, attentionMask: BigInt64Array, batch: number, width: number): BigInt64Array[] {
  if (inputIds.length !== batch * width || attentionMask.length !== batch * width) throw new Error(`a prefill of ${batch} × ${width} has ${inputIds.length} ids and ${attentionMask.length} mask values`);
  const rows: BigInt64Array[] = [];
  for (let r = 0; r < batch; r++) {
    const ids: bigint[] = [];
    for (let j = 0; j < width; j++) if (attentionMask[r * width + j] === 1n) ids.push(inputIds[r * width + j]!);
    if (ids.length === 0) throw new Error(`prefill row ${r} has no token`);
    rows.push(BigInt64Array.from(ids));
  }
  return rows;
}

/**
 * GroupQueryAttention's length inputs for a pass of `seqLen` new tokens per row over rows holding `lens` cached
 * tokens: seqlens_k[b] = the row's total − 1, and the longest total.
 */
export function attentionLengths(lens: readonly number[], seqLen: number): { seqlensK: Int32Array; total: number } {
  const seqlensK = Int32Array.from(lens, (l) => l + seqLen - 1);
  return { seqlensK, total: Math.max(...lens) + seqLen };
}

/**
 * The attention mask a graph that derives those lengths itself (transformers.js's GroupQueryAttention exports) takes:
 * [batch, total], each row's first len + seqLen columns 1 (rows are right-padded on the device).
 */
export function rightPaddedMask(lens: readonly number[], seqLen: number): { mask: BigInt64Array; total: number } {
  const total = Math.max(...lens) + seqLen;
  const mask = new BigInt64Array(lens.length * total);
  lens.forEach((l, b) => mask.fill(1n, b * total, b * total + l + seqLen));
  return { mask, total };
}
