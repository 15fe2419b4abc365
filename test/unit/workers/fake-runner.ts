// A deterministic stand-in model for engine tests: its KV cache holds (token, position) pairs and its next token is a
// hash of exactly the unmasked history, so any mistake in padding, masking, positions or cache order changes the output.
import type { StepInputs } from "../../../workers/text/batch-inputs.ts";
import type { BatchKv } from "../../../workers/text/kv-cache.ts";
import type { ForwardResult, ModelRunner } from "../../../workers/text/model-runner.ts";

export const VOCAB = 64;

/** The fake model's greedy choice after `history` (prompt + generated tokens). */
export function nextToken(history: number[]): number {
  let h = history.length * 7;
  history.forEach((t, i) => (h = (h + t * (i + 1) * 31) % 1000003));
  return h % VOCAB;
}

/** Greedy continuation computed directly, without the engine. */
export function referenceGreedy(prompt: number[], count: number): number[] {
  const all = [...prompt];
  const out: number[] = [];
  for (let i = 0; i < count; i++) {
    const t = nextToken(all);
    all.push(t);
    out.push(t);
  }
  return out;
}

export class FakeRunner implements ModelRunner {
  readonly vocabSize = VOCAB;
  readonly maxContext: number;
  readonly padId = 0;
  readonly calls: { batch: number; seqLen: number; pastLen: number }[] = [];
  /** A forward pass whose new tokens include this id throws. */
  poison = -1;

  constructor(maxContext = 256) {
    this.maxContext = maxContext;
  }

  async forward(inputs: StepInputs, past: BatchKv | null): Promise<ForwardResult> {
    const { batch, seqLen, pastLen } = inputs;
    this.calls.push({ batch, seqLen, pastLen });
    if ((past?.length ?? 0) !== pastLen) throw new Error(`past has ${past?.length} columns, inputs say ${pastLen}`);
    if (past && past.tensors[0]!.dims[0] !== batch) throw new Error("past batch differs from inputs");
    if (inputs.inputIds.some((t) => Number(t) === this.poison)) throw new Error("poisoned input");
    const total = pastLen + seqLen;
    const key = new Float32Array(batch * total * 2);
    const logits = new Float32Array(batch * VOCAB).fill(-1);
    for (let b = 0; b < batch; b++) {
      const history: number[] = [];
      for (let c = 0; c < total; c++) {
        const real = inputs.attentionMask[b * total + c] === 1n;
        let token: number;
        let position: number;
        if (c < pastLen) {
          const at = (b * pastLen + c) * 2;
          token = past!.tensors[0]!.data[at]!;
          position = past!.tensors[0]!.data[at + 1]!;
        } else {
          token = Number(inputs.inputIds[b * seqLen + c - pastLen]);
          position = Number(inputs.positionIds[b * seqLen + c - pastLen]);
        }
        // Masked columns are stored as NaN: reading one would poison the output.
        key.set(real ? [token, position] : [NaN, NaN], (b * total + c) * 2);
        if (!real) continue;
        if (position !== history.length) throw new Error(`row ${b} column ${c}: position ${position}, expected ${history.length}`);
        history.push(token);
      }
      const next = nextToken(history);
      logits[b * VOCAB + next] = 5;
      logits[b * VOCAB + ((next + 1) % VOCAB)] = 4.5;
    }
    const dims: [number, number, number, number] = [batch, 1, total, 2];
    return { logits, vocab: VOCAB, present: [{ data: key, dims }, { data: key.slice(), dims }] };
  }
}
