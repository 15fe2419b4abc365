// The engine's decode step on one runner, at a given batch and context: wall time and host↔device bytes per step.
import type { StepInputs } from "../../workers/text/batch-inputs.ts";
import { Engine } from "../../workers/text/engine.ts";
import { type BatchKv, type BatchRow, type KvTensor, rebuildBatch } from "../../workers/text/kv-cache.ts";
import type { ForwardResult, ModelRunner } from "../../workers/text/model-runner.ts";
import { greedyParams } from "../helpers/sampling.ts";
import { medianBy } from "./metrics.ts";

export interface StepShape {
  rows: number;
  /** Prompt tokens per row: the cached context the decode steps run over. */
  prompt: number[];
  /** Tokens each row generates (the first comes from the prefill, the rest from decode steps). */
  newTokens: number;
}

export interface StepSample {
  ms: number;
  toDevice: number;
  toHost: number;
}

export interface StepProfile {
  rows: number;
  context: number;
  /** Decode-only steps measured. */
  steps: number;
  stepMsP50: number;
  /** Median bytes per decode-only step; null for a runner that keeps everything on the host. */
  toDevice: number | null;
  toHost: number | null;
}

/**
 * Runs `rows` copies of the prompt through an Engine over `runner`, all admitted in one prefill (the budget fits them),
 * and samples every step that decoded all rows and prefilled nothing: a prefill or a cache join moves other bytes.
 * The median stands for the step, so the rare step that grows the device cache (every ≥ 32 steps, 8 bytes a row of
 * indices) does not hide the steady one.
 */
export async function decodeStepProfile(runner: ModelRunner<unknown>, tokenBytes: (id: number) => Uint8Array, shape: StepShape): Promise<StepProfile> {
  const { rows, prompt, newTokens } = shape;
  let produced = 0;
  const engine = new Engine(prefillOnce(runner), {
    maxBatch: rows,
    tokenBytes,
    prefillTokenBudget: rows * prompt.length,
    emit: (deltas) => {
      for (const d of deltas) produced += d.tokens;
    },
  });
  for (let i = 0; i < rows; i++) engine.add(`steps-${rows}-${prompt.length}-${i}`, prompt, greedyParams(newTokens));
  const samples: StepSample[] = [];
  const moved = () => ({ toDevice: runner.transfer?.toDevice ?? 0, toHost: runner.transfer?.toHost ?? 0 });
  while (engine.hasWork()) {
    const before = moved();
    const t0 = performance.now();
    await engine.step();
    const ms = performance.now() - t0;
    const after = moved();
    if (engine.lastStep.prefillTokens === 0 && engine.lastStep.decodeRows === rows) {
      samples.push({ ms, toDevice: after.toDevice - before.toDevice, toHost: after.toHost - before.toHost });
    }
  }
  if (produced !== rows * newTokens) throw new Error(`the engine produced ${produced} tokens, expected ${rows * newTokens}`);
  if (samples.length === 0) throw new Error(`no step decoded all ${rows} rows without a prefill`);
  // The lower middle sample, never an average of two: a byte count is one step's, not a blend.
  const p50 = (key: keyof StepSample) => medianBy(samples, (s) => s[key])[key];
  const device = runner.transfer !== undefined;
  return { rows, context: prompt.length, steps: samples.length, stepMsP50: p50("ms"), toDevice: device ? p50("toDevice") : null, toHost: device ? p50("toHost") : null };
}

/** Whether every row of a pass has row 0's ids and mask. */
function identicalRows(x: StepInputs): boolean {
  const ids = x.seqLen, mask = x.pastLen + x.seqLen;
  for (let r = 1; r < x.batch; r++) {
    for (let j = 0; j < ids; j++) if (x.inputIds[r * ids + j] !== x.inputIds[j]) return false;
    for (let j = 0; j < mask; j++) if (x.attentionMask[r * mask + j] !== x.attentionMask[j]) return false;
  }
  return true;
}

/**
 * `runner`, except that a prefill from nothing of identical rows runs one row and copies its cache to the others (on
 * the device, for a device runner): a software driver's attention takes seconds per 512-token prompt (minutes for 16
 * at 0.5B), and the table is about the decode steps that follow, which see the same cache either way. Only for an
 * engine with nothing else cached: the device's arrangement frees every other batch.
 */
export function prefillOnce<T>(runner: ModelRunner<T>): ModelRunner<T> {
  const forward = async (x: StepInputs, past: BatchKv<T> | null): Promise<ForwardResult<T>> => {
    if (past || x.batch === 1 || x.features || !identicalRows(x)) return runner.forward(x, past);
    const out = await runner.forward({ ...x, batch: 1, inputIds: x.inputIds.subarray(0, x.seqLen), attentionMask: x.attentionMask.subarray(0, x.seqLen), positionIds: x.positionIds.subarray(0, x.seqLen) }, null);
    const len = Number(x.attentionMask.subarray(0, x.seqLen).reduce((a, b) => a + b, 0n));
    const one: BatchKv<T> = { tensors: out.present, lens: [len], length: x.seqLen };
    const copies: BatchRow<T>[] = Array.from({ length: x.batch }, () => ({ kv: one, row: 0 }));
    const kv = runner.cache ? (await runner.cache.arrange(copies, [])).kv : (rebuildBatch(copies as BatchRow<KvTensor>[]) as BatchKv<T> | null);
    const logits = new Float32Array(x.batch * out.vocab);
    for (let r = 0; r < x.batch; r++) logits.set(out.logits.subarray(0, out.vocab), r * out.vocab);
    return { logits, vocab: out.vocab, present: kv!.tensors };
  };
  return { vocabSize: runner.vocabSize, maxContext: runner.maxContext, padId: runner.padId, cache: runner.cache, transfer: runner.transfer, forward };
}

/** A prompt of `length` ordinary ids (below `vocab`), the same for every row: a long context without a long text. */
export function syntheticPrompt(length: number, vocab: number): number[] {
  return Array.from({ length }, (_, i) => (i * 31 + 7) % Math.min(vocab, 2000));
}
