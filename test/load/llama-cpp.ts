// The llama.cpp yardstick: the bench model's own weights as GGUF, run by node-llama-cpp's prebuilt CPU binary as a static
// greedy batch with one llama_decode per step, timed as kiln's direct loop is timed.
import type { Llama, LlamaModel } from "node-llama-cpp";
import { installGguf } from "../../src/modelgen/gguf-install.ts";
import type { GgufFormat } from "../../src/modelgen/gguf-model.ts";
import type { ModelSpec } from "../../src/modelgen/index.ts";
import { BatchDecoder, loadLlamaCpp } from "./llama-cpp-runtime.ts";
import { medianBy, percentile } from "./metrics.ts";

/**
 * Prompts are fed in decodes of at most this many tokens: llama-server's default n_ubatch (its n_batch of 2048 is split
 * into these anyway). node-llama-cpp sizes the compute buffer by the batch, so this also bounds memory at 8 × 2,000.
 */
export const PREFILL_CHUNK = 512;

export interface RunTiming {
  batch: number;
  newTokens: number;
  /** Start of the prefill to the last token, ms. */
  totalMs: number;
  /** The prefill (it yields every row's first token), ms. */
  prefillMs: number;
  /** Each later step's wall time (one decode for every row, plus sampling). */
  stepMs: number[];
}

/** The two rates every row of the bench reports, so no yardstick gets a different one. */
export interface Rates {
  /** Generated tokens across the batch per second, prefill included. */
  wall: number;
  /** Tokens after the first per second of decoding (prefill excluded). */
  decode: number;
}

export function ratesOf(t: Pick<RunTiming, "batch" | "newTokens" | "totalMs" | "prefillMs">): Rates {
  return {
    wall: (t.batch * t.newTokens) / (t.totalMs / 1000),
    decode: t.newTokens > 1 ? (t.batch * (t.newTokens - 1)) / ((t.totalMs - t.prefillMs) / 1000) : NaN,
  };
}

export interface LlamaLevel extends Rates {
  format: GgufFormat;
  batch: number;
  prefillMs: number;
  stepMsP50: number;
}

export interface LlamaCppOptions {
  spec: ModelSpec;
  /** Where the GGUF files are written (kept between runs; named by build hash). */
  ggufDir: string;
  formats: GgufFormat[];
  threads: number;
}

/** One GGUF model of the bench spec, loaded, with a context sized for `sequences` rows of `perSequence` tokens. */
export class LlamaCppModel {
  private constructor(
    readonly format: GgufFormat,
    readonly model: LlamaModel,
    private readonly threads: number,
    /** node-llama-cpp's setting: "auto" lets llama.cpp decide (it turns it on for this CPU backend). */
    readonly flashAttention: string,
  ) {}

  static async open(llama: Llama, opts: LlamaCppOptions, format: GgufFormat): Promise<LlamaCppModel> {
    const { path, built } = await installGguf(opts.ggufDir, opts.spec, format);
    console.log(`llama.cpp ${format}: ${built ? "wrote" : "reusing"} ${path}`);
    return LlamaCppModel.openFile(llama, path, format, opts.threads);
  }

  /** A GGUF file as it is (`format` names it in the rows). */
  static async openFile(llama: Llama, path: string, format: GgufFormat, threads: number): Promise<LlamaCppModel> {
    const model = await llama.loadModel({ modelPath: path, gpuLayers: 0 });
    return new LlamaCppModel(format, model, threads, String(model.defaultContextFlashAttention));
  }

  /**
   * `rounds` timed runs (after one short warm-up) of one row per prompt (all of one length) generating `newTokens`
   * each; the median run by total time is returned, as the direct loop does. Every run starts from empty KV cells, so
   * nothing of one run's prompts is reused by the next.
   */
  async run(prompts: readonly (readonly number[])[], newTokens: number, rounds: number): Promise<RunTiming> {
    const batch = prompts.length;
    const length = prompts[0]?.length ?? 0;
    if (!batch || prompts.some((p) => p.length !== length)) throw new Error("llama.cpp run: every row needs a prompt, all of one length");
    const context = await this.model.createContext({
      sequences: batch,
      contextSize: length + newTokens + 8,
      batchSize: Math.min(PREFILL_CHUNK, Math.max(batch, batch * length)),
      // The same thread count as kiln; node-llama-cpp's default starts more threads than cores, and they spin.
      threads: this.threads,
    });
    const decoder = new BatchDecoder(context, this.model);
    try {
      await greedy(decoder, prompts, Math.min(4, newTokens));
      const runs: RunTiming[] = [];
      for (let r = 0; r < rounds; r++) runs.push(await greedy(decoder, prompts, newTokens));
      return medianBy(runs, (x) => x.totalMs);
    } finally {
      decoder.dispose();
      await context.dispose();
    }
  }

  async dispose(): Promise<void> {
    await this.model.dispose();
  }
}

async function greedy(decoder: BatchDecoder, rows: readonly (readonly number[])[], newTokens: number): Promise<RunTiming> {
  const batch = rows.length;
  decoder.clear(batch);
  const started = performance.now();
  let next = await decoder.prefill(rows, PREFILL_CHUNK);
  const prefillMs = performance.now() - started;
  const stepMs: number[] = [];
  for (let step = 1; step < newTokens; step++) {
    const t0 = performance.now();
    next = await decoder.step(next.map((t) => [t]), rows.map((p) => p.length + step - 1));
    stepMs.push(performance.now() - t0);
  }
  return { batch, newTokens, totalMs: performance.now() - started, prefillMs, stepMs };
}

export interface LlamaCppBench {
  /** Per level, the format with the higher wall-clock rate (Q4_0 and Q8_0 are both measured). */
  best: LlamaLevel[];
  all: LlamaLevel[];
  flashAttention: string;
  /** The loaded models stay open for the long-prompt scenario; call when done. */
  models: LlamaCppModel[];
}

/** Opens every format's model; `{skipped}` when node-llama-cpp is missing or fails, so the bench goes on without it. */
export async function openLlamaCpp(opts: LlamaCppOptions): Promise<LlamaCppModel[] | { skipped: string }> {
  const rt = await loadLlamaCpp();
  if ("error" in rt) return { skipped: rt.error };
  const models: LlamaCppModel[] = [];
  try {
    for (const format of opts.formats) models.push(await LlamaCppModel.open(rt.llama, opts, format));
    return models;
  } catch (e) {
    for (const m of models) await m.dispose();
    return { skipped: `llama.cpp failed: ${(e as Error).message.split("\n")[0]}` };
  }
}

/**
 * Every format at one level, a row per prompt. The bench runs it right after kiln's level of the same size, as it does
 * the direct loop, so both sides of kiln/llama.cpp see the same load on a shared box.
 */
export async function llamaCppLevel(models: LlamaCppModel[], prompts: readonly (readonly number[])[], newTokens: number, rounds: number): Promise<LlamaLevel[]> {
  const out: LlamaLevel[] = [];
  const batch = prompts.length;
  for (const m of models) {
    const t = await m.run(prompts, newTokens, rounds);
    const level = { format: m.format, batch, prefillMs: t.prefillMs, stepMsP50: t.stepMs.length ? percentile(t.stepMs, 50) : NaN, ...ratesOf(t) };
    out.push(level);
    console.log(`llama.cpp ${m.format} batch ${batch}: ${level.wall.toFixed(1)} tok/s wall, ${level.decode.toFixed(1)} decode (prefill ${t.prefillMs.toFixed(0)} ms, step p50 ${level.stepMsP50.toFixed(1)} ms)`);
  }
  return out;
}

/** The levels' results with each level's best format (the higher wall-clock rate). */
export function llamaCppBench(models: LlamaCppModel[], all: LlamaLevel[], levels: number[]): LlamaCppBench {
  const best = levels.map((batch) => all.filter((l) => l.batch === batch).reduce((a, b) => (b.wall > a.wall ? b : a)));
  return { best, all, flashAttention: models[0]?.flashAttention ?? "?", models };
}
