// The bench's llama.cpp section: runs llama.cpp on the bench model's weights right after each of kiln's levels, then
// prints one table of every runtime's rates and the long-prompt scenario. Without node-llama-cpp it says why and skips its rows.
import type { SmallStepFormat } from "../../src/models/step-formats.ts";
import { readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { dirname, join } from "node:path";
import type { GgufFormat } from "../../src/modelgen/gguf-model.ts";
import type { ModelSpec } from "../../src/modelgen/index.ts";
import { describeCpu, readCpuInfo } from "../../src/native/cpu.ts";
import type { DirectBenchResult } from "./direct-ort.ts";
import { llamaCppBench, llamaCppLevel, openLlamaCpp, PREFILL_CHUNK, type LlamaCppBench, type LlamaCppModel, type LlamaLevel } from "./llama-cpp.ts";
import { llamaAccuracyLines } from "./llama-cpp-accuracy.ts";
import { longPromptRows, longTargetLines, renderLongTable } from "./llama-cpp-long.ts";
import { directRates, kilnRates, llamaFormatsLine, renderVersusTable, versusTargetLines, type VersusRow } from "./llama-cpp-report.ts";
import type { LevelSummary } from "./metrics.ts";

/** KILN_BENCH_LLAMA=0 leaves llama.cpp out; KILN_BENCH_GGUF picks the formats it runs (the best one is reported). */
const ENABLED = process.env.KILN_BENCH_LLAMA !== "0";
const FORMATS = (process.env.KILN_BENCH_GGUF ?? "q4_0,q8_0").split(",").map((s) => s.trim()) as GgufFormat[];
/** The long-prompt scenario: prompt length (0 skips it), row counts and new tokens per row. */
const LONG_PROMPT = Number(process.env.KILN_BENCH_LONG_PROMPT ?? 2000);
const LONG_LEVELS = (process.env.KILN_BENCH_LONG_LEVELS ?? "1,8").split(",").map(Number);
const LONG_TOKENS = Number(process.env.KILN_BENCH_LONG_TOKENS ?? 16);
/** Alternating runs of kiln's engine and llama.cpp in the long-prompt scenario (their medians are printed). */
const LONG_ROUNDS = Math.max(1, Number(process.env.KILN_BENCH_LONG_ROUNDS ?? 3));

export interface SectionInput {
  spec: ModelSpec;
  /** Where GGUF files are kept between runs. */
  ggufDir: string;
  /** kiln's templated prompt (one of them: every request's is different, all of this length). */
  promptIds: number[];
  /**
   * llama.cpp's rows at `batch`: a different prompt each, of promptIds' length, as kiln gets a different one per request,
   * so neither side's prompt cache has anything to reuse.
   */
  promptsFor: (batch: number) => Promise<number[][]>;
  levels: number[];
  newTokens: number;
  rounds: number;
  threads: number;
  kiln: LevelSummary[];
  direct: DirectBenchResult[];
  /** llama.cpp's levels, run right after kiln's (openLlamaForBench, llamaLevelForBench). */
  llama: LlamaRuns;
  /** The direct loop's model folder and dtype, for the long-prompt scenario. */
  modelDir: string;
  dtype: string;
  small?: SmallStepFormat;
}

function nodeLlamaCppVersion(): string {
  try {
    return JSON.parse(readFileSync(join(import.meta.dir, "..", "..", "node_modules", "node-llama-cpp", "package.json"), "utf8")).version;
  } catch {
    return "?";
  }
}

/** llama.cpp's models and the levels run so far, or why it is left out (then `models` is empty). */
export interface LlamaRuns {
  models: LlamaCppModel[];
  levels: LlamaLevel[];
  skipped?: string;
}

/** Opens llama.cpp's formats for the bench (before kiln's levels, so each level can run right after kiln's). */
export async function openLlamaForBench(i: Pick<SectionInput, "spec" | "ggufDir" | "threads">): Promise<LlamaRuns> {
  if (!ENABLED) return { models: [], levels: [], skipped: "llama.cpp left out (KILN_BENCH_LLAMA=0)" };
  const models = await openLlamaCpp({ spec: i.spec, ggufDir: i.ggufDir, formats: FORMATS, threads: i.threads });
  return "skipped" in models ? { models: [], levels: [], ...models } : { models, levels: [] };
}

/** Runs llama.cpp at one level, if it is in the bench; a failure leaves it out of the rest (kiln's rows go on). */
export async function llamaLevelForBench(runs: LlamaRuns, i: Pick<SectionInput, "promptsFor" | "newTokens" | "rounds">, batch: number): Promise<void> {
  if (runs.skipped) return;
  try {
    runs.levels.push(...(await llamaCppLevel(runs.models, await i.promptsFor(batch), i.newTokens, i.rounds)));
  } catch (e) {
    for (const m of runs.models) await m.dispose();
    runs.models = [];
    runs.skipped = `llama.cpp failed at ${batch} rows: ${(e as Error).message.split("\n")[0]}`;
  }
}

/** The versus table from the levels run, then the long-prompt scenario; returns the text to print. */
export async function llamaCppSection(i: SectionInput): Promise<string> {
  // llama.cpp's threads meet at a barrier after every op, so other processes on the box slow it far more than ONNX
  // Runtime (tens of times at a load of 7 on 2 cores, against about 3×): the load average says whether to trust a run.
  const cpu = readCpuInfo();
  const load = `load average ${loadavg()[0]!.toFixed(1)} on ${cpu.logicalCores} cores${loadavg()[0]! > cpu.logicalCores ? " (other processes are running: figures are unreliable, llama.cpp's most)" : ""}`;
  const out: string[] = ["", `cpu: ${describeCpu(cpu)}; ${load}`];
  const bench: LlamaCppBench | { skipped: string } = i.llama.skipped ? { skipped: i.llama.skipped } : llamaCppBench(i.llama.models, i.llama.levels, i.levels);
  const ran = "best" in bench ? bench : undefined;
  out.push(
    ran
      ? `llama.cpp: node-llama-cpp ${nodeLlamaCppVersion()} prebuilt CPU binary, ${i.threads} threads, flash attention ${ran.flashAttention}, ` +
          `prompts of kiln's ${i.promptIds.length} tokens (a different one per row, as kiln gets per request), one llama_decode per step for all rows, prompts fed ≤ ${PREFILL_CHUNK} tokens a decode, F16 KV cache, median of ${i.rounds} rounds`
      : `llama.cpp rows skipped: ${(bench as { skipped: string }).skipped}`,
  );
  const rows: VersusRow[] = i.levels.map((clients, k) => ({
    clients,
    kiln: kilnRates(i.kiln[k]!),
    direct: directRates(i.direct[k]!, clients, i.newTokens),
    llama: ran?.best[k],
  }));
  out.push(
    `wall = generated tokens / time from request (or prefill) start, prefill included; decode = tokens after the first / time after it (kiln over HTTP: clients / TPOT p50)`,
    renderVersusTable(rows),
  );
  if (ran) {
    out.push(llamaFormatsLine(ran.all), ...versusTargetLines(rows, ran.all));
    // The bench keeps its fp32 build beside the quantized one (one models dir per dtype) for its own accuracy line.
    const refDir = join(dirname(i.ggufDir), "fp32", i.spec.id);
    out.push(...(await llamaAccuracyLines(ran.models, refDir, i.promptIds.slice(0, 32), i.spec.vocab, i.threads)));
  }

  if (LONG_PROMPT > 0) {
    const stepOf = (batch: number) => i.direct[i.levels.indexOf(batch)]?.stepMsP50;
    const direct = new Map(LONG_LEVELS.filter((b) => stepOf(b) !== undefined).map((b) => [b, stepOf(b)!]));
    // llama.cpp's long run uses the format that was best at the most rows.
    const bestFormat = ran?.best[ran.best.length - 1]?.format;
    const model = ran?.models.find((m) => m.format === bestFormat);
    try {
      const longRows = await longPromptRows({
        promptTokens: Math.min(LONG_PROMPT, i.spec.contextLength - LONG_TOKENS - 8),
        shortPromptTokens: i.promptIds.length,
        levels: LONG_LEVELS,
        newTokens: LONG_TOKENS,
        threads: i.threads,
        vocab: i.spec.vocab,
        direct: { modelDir: i.modelDir, dtype: i.dtype, small: i.small, shortStepMs: direct },
        llama: model ? { model } : undefined,
        rounds: LONG_ROUNDS,
      });
      const how = `kiln's engine and llama.cpp in turn, median of ${LONG_ROUNDS} run${LONG_ROUNDS === 1 ? "" : "s"} each (the short context's step measured beside the long one's); the direct loop one run`;
      out.push("", `long prompts (${LONG_TOKENS} new tokens per row; ${how}):`, renderLongTable(longRows, i.promptIds.length),
        "kiln engine: prefill ms runs until every row has its first token, through the server's chunked lane (one long prompt at a time, 512 tokens a step, started rows decoding meanwhile)",
        ...longTargetLines(longRows));
    } catch (e) {
      out.push(`long-prompt scenario failed: ${(e as Error).message.split("\n")[0]}`);
    }
  }
  for (const m of ran?.models ?? []) await m.dispose();
  return out.join("\n");
}
