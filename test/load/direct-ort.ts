// The "direct" yardstick for benchmarks: a bare static-batch greedy loop over the model's ONNX Runtime session.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import * as ort from "onnxruntime-node";
import { onnxFileForDtype } from "../../src/models/manifest.ts";
import { runsSmall, type SmallStepFormat } from "../../src/models/step-formats.ts";
import { sessionOptions } from "../../workers/text/load-model.ts";
import { type GraphLayout, graphLayout } from "../../workers/text/ort-runner.ts";
import { argmax } from "../../workers/text/sampler.ts";
import { medianBy, percentile } from "./metrics.ts";

export interface DirectBenchOptions {
  modelDir: string;
  dtype: string;
  batch: number;
  promptTokens: number;
  newTokens: number;
  threads: number;
  /** Timed runs after the warm-up; the median one is reported. */
  rounds: number;
  /** kiln's small-step format: passes it covers run on a second session, as in kiln's worker. */
  small?: SmallStepFormat;
}

export interface DirectBenchResult {
  /** Generated tokens across the batch per second of wall time, prefill included (it yields the first token). */
  tokPerSec: number;
  prefillMs: number;
  /** Median wall time of one decode step (session.run plus argmax). */
  stepMsP50: number;
}

const int64 = (values: number[], dims: number[]) => new ort.Tensor("int64", BigInt64Array.from(values, BigInt), dims);

export async function directDecodeBench(opts: DirectBenchOptions): Promise<DirectBenchResult> {
  const config = JSON.parse(readFileSync(join(opts.modelDir, "config.json"), "utf8"));
  // The same session options as kiln's worker, so the yardstick measures the same runtime.
  const open = (dtype: string) => {
    const file = onnxFileForDtype(dtype);
    if (!file) throw new Error(`unknown dtype ${dtype}`);
    const options = sessionOptions(opts.threads, navigator.hardwareConcurrency, process.env.KILN_ORT_SPINNING);
    return ort.InferenceSession.create(join(opts.modelDir, "onnx", file), options as ort.InferenceSession.SessionOptions);
  };
  const session = await open(opts.dtype);
  const small = opts.small ? await open(opts.small.dtype) : null;
  const shape: LoopShape = {
    layout: graphLayout(session, config),
    vocab: config.vocab_size,
    batch: opts.batch,
    promptTokens: opts.promptTokens,
  };
  const pick = (rows: number, tokens: number) => (small && runsSmall(opts.small, rows, tokens) ? small : session);
  try {
    await greedyLoop(pick, shape, 4); // warm-up, as kiln gets a warm-up request: first runs allocate
    const runs = [];
    for (let r = 0; r < opts.rounds; r++) runs.push(await greedyLoop(pick, shape, opts.newTokens));
    const run = medianBy(runs, (x) => x.totalMs);
    return {
      tokPerSec: (opts.batch * opts.newTokens) / (run.totalMs / 1000),
      prefillMs: run.prefillMs,
      stepMsP50: run.stepMs.length ? percentile(run.stepMs, 50) : 0,
    };
  } finally {
    await Promise.all([session.release(), small?.release()]);
  }
}

interface LoopShape {
  /** Cache input names, KV shape and optional inputs, read as kiln's worker reads them. */
  layout: GraphLayout;
  vocab: number;
  batch: number;
  promptTokens: number;
}

/** `pick` names the session of a pass of rows × new tokens. */
async function greedyLoop(pick: (rows: number, tokens: number) => ort.InferenceSession, shape: LoopShape, newTokens: number) {
  const { batch: B, promptTokens: P, vocab } = shape;
  const { pastNames, presentNames, kvHeads, headDim, hasPositionIds, hasLogitsToKeep } = shape.layout;
  // Every row gets the same prompt, so there is no padding: the static batch this yardstick stands for.
  const prompt = Array.from({ length: P }, (_, i) => (i * 31 + 7) % Math.min(vocab, 2000));
  let feeds: Record<string, ort.Tensor> = {
    input_ids: int64(Array.from({ length: B }, () => prompt).flat(), [B, P]),
    attention_mask: int64(new Array(B * P).fill(1), [B, P]),
  };
  if (hasPositionIds) feeds.position_ids = int64(Array.from({ length: B }, () => prompt.map((_, i) => i)).flat(), [B, P]);
  for (const name of pastNames) feeds[name] = new ort.Tensor("float32", new Float32Array(0), [B, kvHeads, 0, headDim]);

  const stepMs: number[] = [];
  let prefillMs = 0;
  const started = performance.now();
  let length = P;
  for (let step = 0; step < newTokens; step++) {
    if (hasLogitsToKeep) feeds.num_logits_to_keep = int64([1], []);
    const t0 = performance.now();
    // The whole present cache comes back each pass: the bare loop kiln's in-place cache is measured against.
    const out = await pick(B, step === 0 ? P : 1).run(feeds, ["logits", ...presentNames]);
    const logits = out.logits!;
    const [, S, V] = logits.dims as number[];
    const data = logits.data as Float32Array;
    const next: number[] = [];
    for (let b = 0; b < B; b++) {
      const base = (b * S! + S! - 1) * V!;
      next.push(argmax(data.subarray(base, base + V!)));
    }
    const ms = performance.now() - t0;
    if (step === 0) prefillMs = ms;
    else stepMs.push(ms);
    length += 1;
    feeds = { input_ids: int64(next, [B, 1]), attention_mask: int64(new Array(B * length).fill(1), [B, length]) };
    if (hasPositionIds) feeds.position_ids = int64(new Array(B).fill(length - 1), [B, 1]);
    pastNames.forEach((name, j) => (feeds[name] = out[presentNames[j]!]!));
  }
  return { totalMs: performance.now() - started, prefillMs, stepMs };
}
