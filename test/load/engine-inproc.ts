// The middle yardstick for benchmarks: kiln's own batching engine in this process, no worker, HTTP or SSE.
// direct → engine isolates the engine's per-step work; engine → kiln isolates transport (worker messages, HTTP, SSE).
import { Engine } from "../../workers/text/engine.ts";
import type { SmallStepFormat } from "../../src/models/step-formats.ts";
import { loadModel, type LoadedModel } from "../../workers/text/load-model.ts";
import { greedyParams } from "../helpers/sampling.ts";
import { medianBy } from "./metrics.ts";

export interface EngineBenchOptions {
  batch: number;
  promptTokens: number;
  newTokens: number;
  rounds: number;
}

export async function loadEngineModel(modelDir: string, dtype: string, threads: number, small?: SmallStepFormat): Promise<LoadedModel> {
  return loadModel({ id: "bench", dir: modelDir, dtype, small, threads, maxBatch: 64 });
}

/** Output tok/s of `batch` greedy sequences added together and stepped to the end (median of `rounds`). */
export async function engineDecodeBench(model: LoadedModel, opts: EngineBenchOptions): Promise<number> {
  const prompt = Array.from({ length: opts.promptTokens }, (_, i) => (i * 31 + 7) % 2000);
  const params = greedyParams(opts.newTokens);
  const once = async (round: number) => {
    let tokens = 0;
    const engine = new Engine(model.runner, {
      maxBatch: opts.batch,
      tokenBytes: model.tokenBytes,
      emit: (deltas) => {
        for (const d of deltas) tokens += d.tokens;
      },
    });
    for (let i = 0; i < opts.batch; i++) engine.add(`r${round}-${i}`, prompt, params);
    const started = performance.now();
    while (engine.hasWork()) await engine.step();
    const ms = performance.now() - started;
    if (tokens !== opts.batch * opts.newTokens) throw new Error(`engine produced ${tokens} tokens, expected ${opts.batch * opts.newTokens}`);
    return tokens / (ms / 1000);
  };
  await once(-1); // warm-up
  const rates: number[] = [];
  for (let r = 0; r < opts.rounds; r++) rates.push(await once(r));
  return medianBy(rates, (x) => x);
}

/**
 * kiln's engine on `batch` copies of a long prompt, as a server would run them: its chunked lane prefills one long
 * prompt at a time (`budget` tokens a step) while the rows already started decode. prefillMs runs until every row has
 * its first token (so it includes those decode steps); steps are those that decode every row and prefill nothing.
 * Row i asks for enough tokens to still be running when the last row starts.
 */
export async function engineLongRun(model: LoadedModel, prompt: number[], batch: number, newTokens: number, budget = 512): Promise<{ prefillMs: number; stepMsP50: number }> {
  const started = new Set<string>();
  const engine = new Engine(model.runner, {
    maxBatch: batch,
    tokenBytes: model.tokenBytes,
    prefillTokenBudget: budget,
    emit: (deltas) => {
      for (const d of deltas) if (d.tokens > 0) started.add(d.seqId);
    },
  });
  const chunks = Math.ceil(prompt.length / budget);
  for (let i = 0; i < batch; i++) engine.add(`long-${i}`, prompt, greedyParams(newTokens + (batch - 1 - i) * chunks));
  const t0 = performance.now();
  let prefillMs = 0;
  const steps: number[] = [];
  while (engine.hasWork()) {
    const s0 = performance.now();
    await engine.step();
    if (prefillMs === 0 && started.size === batch) prefillMs = performance.now() - t0;
    else if (prefillMs > 0 && engine.lastStep.prefillTokens === 0 && engine.lastStep.decodeRows === batch) steps.push(performance.now() - s0);
  }
  if (steps.length === 0) throw new Error(`no step decoded all ${batch} rows`);
  return { prefillMs, stepMsP50: medianBy(steps, (x) => x) };
}
