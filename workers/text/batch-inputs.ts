// Pure builders of the int64 graph inputs (ids, attention mask, positions) for a prefill or a decode step.

export interface StepInputs {
  batch: number;
  /** New tokens per row this step (S). */
  seqLen: number;
  /** Past columns fed with these inputs. */
  pastLen: number;
  inputIds: BigInt64Array;
  /** [batch, pastLen + seqLen]: 0 on left padding, 1 on real tokens. */
  attentionMask: BigInt64Array;
  /** [batch, seqLen]: each row's true positions (padding gets 0, it is masked anyway). */
  positionIds: BigInt64Array;
  /** Encoder features written over token embeddings of this pass (media prompts only). */
  features?: FeatureRows[];
  /** Keep every position's logits, not only the last (a one-row pass scoring its prompt: ModelRunner.allPositions). */
  allLogits?: boolean;
}

/** Feature rows (n × hidden, `data`) that replace the token embeddings of row `row`, columns [col, col + n) of a pass. */
export interface FeatureRows {
  row: number;
  col: number;
  data: Float32Array;
}

/**
 * Inputs for prompts prefilled together from an empty past: left-padded to the longest prompt
 * with `padId`, so every row's last prompt token sits in the last column.
 */
export function prefillInputs(prompts: number[][], padId: number): StepInputs {
  const batch = prompts.length;
  const seqLen = Math.max(...prompts.map((p) => p.length));
  const inputIds = new BigInt64Array(batch * seqLen).fill(BigInt(padId));
  const attentionMask = new BigInt64Array(batch * seqLen);
  const positionIds = new BigInt64Array(batch * seqLen);
  prompts.forEach((prompt, r) => {
    const pad = seqLen - prompt.length;
    for (let j = 0; j < prompt.length; j++) {
      const at = r * seqLen + pad + j;
      inputIds[at] = BigInt(prompt[j]!);
      attentionMask[at] = 1n;
      positionIds[at] = BigInt(j);
    }
  });
  return { batch, seqLen, pastLen: 0, inputIds, attentionMask, positionIds };
}

/** Inputs for one decode step: row r feeds `tokens[r]` after a past of `pastLen` columns of which its last `lens[r]` are real. */
export function decodeInputs(tokens: number[], lens: number[], pastLen: number): StepInputs {
  const batch = tokens.length;
  if (lens.length !== batch) throw new Error("decodeInputs: tokens and lens differ in length");
  const width = pastLen + 1;
  const inputIds = new BigInt64Array(batch);
  const attentionMask = new BigInt64Array(batch * width);
  const positionIds = new BigInt64Array(batch);
  for (let r = 0; r < batch; r++) {
    const len = lens[r]!;
    if (len > pastLen) throw new Error(`row ${r} claims ${len} past columns of ${pastLen}`);
    inputIds[r] = BigInt(tokens[r]!);
    attentionMask.fill(1n, r * width + (pastLen - len), (r + 1) * width);
    positionIds[r] = BigInt(len);
  }
  return { batch, seqLen: 1, pastLen, inputIds, attentionMask, positionIds };
}

/** Inputs for one chunk of a single long prompt whose first `pastLen` tokens are already in the cache (no padding). */
export function chunkInputs(tokens: number[], pastLen: number): StepInputs {
  const seqLen = tokens.length;
  const inputIds = BigInt64Array.from(tokens, BigInt);
  const attentionMask = new BigInt64Array(pastLen + seqLen).fill(1n);
  const positionIds = BigInt64Array.from(tokens, (_, j) => BigInt(pastLen + j));
  return { batch: 1, seqLen, pastLen, inputIds, attentionMask, positionIds };
}

/**
 * The same inputs over a cache of `capacity` columns of which the first `pastLen` are in use: the attention mask gets
 * zero columns for the unused ones, between the past and the new tokens (they are masked, whatever they hold).
 */
export function overCapacity(inputs: StepInputs, capacity: number): StepInputs {
  const { batch, seqLen, pastLen } = inputs;
  if (capacity < pastLen) throw new Error(`capacity ${capacity} is below the ${pastLen} columns in use`);
  if (capacity === pastLen) return inputs;
  const width = pastLen + seqLen;
  const wide = capacity + seqLen;
  const attentionMask = new BigInt64Array(batch * wide);
  for (let r = 0; r < batch; r++) {
    const row = inputs.attentionMask.subarray(r * width, (r + 1) * width);
    attentionMask.set(row.subarray(0, pastLen), r * wide);
    attentionMask.set(row.subarray(pastLen), r * wide + capacity);
  }
  return { ...inputs, pastLen: capacity, attentionMask };
}

/**
 * Inputs for prompts prefilled over cached pasts: row r's past is its `past` columns right-aligned at `pastLen`, its
 * new tokens right-aligned in the pass's width (the longest row's); positions continue from the past. A row with
 * fewer new tokens than the width must have no past (its padding would sit between past and tokens).
 */
export function extendInputs(rows: { tokens: number[]; past: number }[], pastLen: number, padId: number): StepInputs {
  const batch = rows.length;
  const seqLen = Math.max(...rows.map((r) => r.tokens.length));
  const width = pastLen + seqLen;
  const inputIds = new BigInt64Array(batch * seqLen).fill(BigInt(padId));
  const attentionMask = new BigInt64Array(batch * width);
  const positionIds = new BigInt64Array(batch * seqLen);
  rows.forEach(({ tokens, past }, r) => {
    if (past > pastLen) throw new Error(`row ${r} claims ${past} past columns of ${pastLen}`);
    if (past > 0 && tokens.length < seqLen) throw new Error(`row ${r} has a past and ${tokens.length} of the pass's ${seqLen} new tokens`);
    const pad = seqLen - tokens.length;
    attentionMask.fill(1n, r * width + pastLen - past, r * width + pastLen);
    attentionMask.fill(1n, r * width + pastLen + pad, (r + 1) * width);
    tokens.forEach((id, j) => {
      inputIds[r * seqLen + pad + j] = BigInt(id);
      positionIds[r * seqLen + pad + j] = BigInt(past + j);
    });
  });
  return { batch, seqLen, pastLen, inputIds, attentionMask, positionIds };
}

/** The pass's inputs with its rows' feature rows attached (text-only passes stay as they are). */
export function withFeatures(inputs: StepInputs, rows: FeatureRows[][]): StepInputs {
  const features = rows.flat();
  return features.length > 0 ? { ...inputs, features } : inputs;
}
