// How closely a runner (the webgpu device's) tracks a reference runner (the CPU's fp32): next-token logits along one
// teacher-forced run, both runners driven directly through the engine's ModelRunner interface.
import { decodeInputs, prefillInputs } from "../../workers/text/batch-inputs.ts";
import { arrangeHost, type BatchKv, type BatchRow } from "../../workers/text/kv-cache.ts";
import type { CacheOps, ModelRunner } from "../../workers/text/model-runner.ts";
import { argmax, correlation } from "../unit/modelgen/ort-driver.ts";

export interface ForcedRun {
  /** One [vocab] row per position: after the prompt, then after each fed token. */
  logits: Float32Array[];
  /** The tokens fed after the prompt (the reference's own argmax, or the ones it was given). */
  fed: number[];
  vocab: number;
}

export interface RunAgreement {
  positions: number;
  min: number;
  median: number;
  /** Positions whose argmax is the reference's. */
  argmaxSame: number;
}

/**
 * Prefills `prompt` alone, then feeds one token a step until `positions` next-token rows are collected: `follow`'s
 * tokens when given (teacher forcing), else the run's own argmax. The cache is arranged between steps as the engine
 * would, so a device runner frees what each step left behind.
 */
export async function forcedRun<T>(runner: ModelRunner<T>, prompt: number[], positions: number, follow?: number[]): Promise<ForcedRun> {
  const cache = (runner.cache ?? { arrange: async (rows) => arrangeHost(rows as BatchRow[]) }) as CacheOps<T>;
  let out = await runner.forward(prefillInputs([prompt], runner.padId), null);
  let kv: BatchKv<T> = { tensors: out.present, lens: [prompt.length], length: prompt.length };
  const logits = [out.logits.slice(0, out.vocab)];
  const fed: number[] = [];
  while (logits.length < positions) {
    const token = follow ? follow[fed.length]! : argmax(logits.at(-1)!, 0, out.vocab);
    fed.push(token);
    out = await runner.forward(decodeInputs([token], kv.lens, kv.length), kv);
    const grown: BatchKv<T> = { tensors: out.present, lens: [kv.lens[0]! + 1], length: kv.length + 1 };
    kv = (await cache.arrange([{ kv: grown, row: 0 }], [])).kv!;
    logits.push(out.logits.slice(0, out.vocab));
  }
  await cache.arrange([], []);
  return { logits, fed, vocab: out.vocab };
}

/** Position-by-position correlation and argmax agreement of `got` against `ref` (same prompt, same fed tokens). */
export function agreement(ref: ForcedRun, got: ForcedRun): RunAgreement {
  if (got.logits.length !== ref.logits.length || got.vocab !== ref.vocab) throw new Error(`runs differ in shape: ${got.logits.length}×${got.vocab} vs ${ref.logits.length}×${ref.vocab}`);
  const r = ref.logits.map((l, i) => correlation(l, got.logits[i]!)).sort((a, b) => a - b);
  const argmaxSame = ref.logits.filter((l, i) => argmax(l, 0, ref.vocab) === argmax(got.logits[i]!, 0, ref.vocab)).length;
  return { positions: r.length, min: r[0]!, median: r[Math.floor(r.length / 2)]!, argmaxSame };
}
