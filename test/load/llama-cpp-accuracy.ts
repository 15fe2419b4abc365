// How closely llama.cpp's formats track kiln's fp32 graph on the bench model: next-token logits over a teacher-forced
// run, position by position, as the bench's accuracy line measures kiln's own quantized format.
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { LlamaModel, Token } from "node-llama-cpp";
import { forward, openDriver, positionCorrelations } from "../unit/modelgen/ort-driver.ts";

/** fp32 ONNX logits at every position of `tokens` (the reference). */
export async function onnxLogits(modelDir: string, tokens: number[]): Promise<Float32Array> {
  const d = await openDriver(modelDir);
  try {
    return (await forward(d, [tokens], [tokens.map(() => 1)], null, 0)).logits;
  } finally {
    await d.session.release();
  }
}

/**
 * llama.cpp's logits at every position of `tokens`, through node-llama-cpp's public sequence API. `f32Cache` keeps the
 * KV cells in F32 (the default F16 cache adds its own rounding); threads are set because node-llama-cpp's default
 * starts more spinning threads than this box has cores.
 */
export async function llamaLogits(model: LlamaModel, tokens: readonly number[], vocab: number, o: { threads: number; f32Cache?: boolean }): Promise<Float32Array> {
  const cache = o.f32Cache ? ({ experimentalKvCacheKeyType: "F32", experimentalKvCacheValueType: "F32" } as const) : {};
  const context = await model.createContext({ contextSize: tokens.length + 8, threads: o.threads, ...cache });
  try {
    const out = await context.getSequence().controlledEvaluate(tokens.map((t) => [t as Token, { generateNext: { logits: true } }]));
    const logits = new Float32Array(tokens.length * vocab);
    out.forEach((o, p) => {
      const m = o?.next?.logits;
      if (!m || m.size !== vocab) throw new Error(`position ${p}: ${m?.size ?? 0} logits, expected ${vocab}`);
      for (const [id, v] of m) logits[p * vocab + id] = v;
    });
    return logits;
  } finally {
    await context.dispose();
  }
}

/** min and median per-position correlation. */
export function agreement(ref: Float32Array, got: Float32Array, vocab: number): { min: number; median: number } {
  const r = positionCorrelations(ref, got, vocab).sort((a, b) => a - b);
  return { min: r[0]!, median: r[Math.floor(r.length / 2)]! };
}

/** One line per loaded format, in the words of the bench's own accuracy line; the reference is the fp32 ONNX build. */
export async function llamaAccuracyLines(models: { format: string; model: LlamaModel }[], refDir: string, tokens: number[], vocab: number, threads: number): Promise<string[]> {
  if (!existsSync(join(refDir, "kiln.json"))) return [`accuracy of llama.cpp's formats: no fp32 build at ${refDir} to compare with`];
  const ref = await onnxLogits(refDir, tokens);
  const lines: string[] = [];
  for (const m of models) {
    const a = agreement(ref, await llamaLogits(m.model, tokens, vocab, { threads }), vocab);
    lines.push(`accuracy: llama.cpp ${m.format.toUpperCase()} (F16 KV cache) vs kiln fp32 next-token logits over a ${tokens.length}-token teacher-forced run, correlation min ${a.min.toFixed(4)}, median ${a.median.toFixed(4)}`);
  }
  return lines;
}
