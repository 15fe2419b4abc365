// The feeds of one encoder run: token rows padded on the right to the longest, with the mask that hides the padding.
// Pure, so what a row sees is tested apart from ONNX Runtime.

export interface PaddedBatch {
  rows: number;
  /** The longest row's length: every row is padded to it. */
  seq: number;
  inputIds: BigInt64Array;
  attentionMask: BigInt64Array;
  /** Each row's real length (where its padding starts). */
  lengths: number[];
}

/** Padding id: any id works, as the mask keeps padded positions out of every real token's attention. */
const PAD_ID = 0n;

export function padBatch(rows: readonly (readonly number[])[]): PaddedBatch {
  const seq = rows.reduce((m, r) => Math.max(m, r.length), 0);
  const inputIds = new BigInt64Array(rows.length * seq).fill(PAD_ID);
  const attentionMask = new BigInt64Array(rows.length * seq);
  rows.forEach((row, b) => {
    for (let t = 0; t < row.length; t++) {
      inputIds[b * seq + t] = BigInt(row[t]!);
      attentionMask[b * seq + t] = 1n;
    }
  });
  return { rows: rows.length, seq, inputIds, attentionMask, lengths: rows.map((r) => r.length) };
}

/**
 * How many of `lengths` (the waiting rows, in order) the next run takes: as many as fit `maxTokens` padded tokens
 * (rows × longest), and always at least one so a long row is never stuck.
 */
export function rowsThatFit(lengths: readonly number[], maxTokens: number): number {
  let longest = 0;
  for (let n = 0; n < lengths.length; n++) {
    longest = Math.max(longest, lengths[n]!);
    if (n > 0 && (n + 1) * longest > maxTokens) return n;
  }
  return lengths.length;
}
