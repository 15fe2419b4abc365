// `bun run bench`: the 0.5B-shape model, direct ONNX Runtime loop, kiln's engine in process and kiln over HTTP at 1/4/8/16, one table.
import { expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { buildModel, PRESETS, type Dtype } from "../../build/model/index.ts";
import { loadTokenizer } from "../../src/inference/tokenizer.ts";
import { readModelFolder } from "../../src/models/registry.ts";
import { tempDir } from "../helpers/kiln.ts";
import { directDecodeBench } from "./direct-ort.ts";
import { engineDecodeBench, loadEngineModel } from "./engine-inproc.ts";
import { medianBy, renderTable, summarize, targetLines, type LevelSummary } from "./metrics.ts";
import { startServerProcess } from "./server-process.ts";
import { streamChat } from "./stream-client.ts";

const LEVELS = [1, 4, 8, 16];
/** int8 (DynamicQuantizeMatMul) by default: on CPU it gains the most from batching (q4 is faster alone, slower at 16). */
const DTYPE = (process.env.KILN_BENCH_DTYPE ?? "int8") as Dtype;
const NEW_TOKENS = Number(process.env.KILN_BENCH_TOKENS ?? 64);
/** Each level runs this many times and reports its median round: this machine's neighbours make single runs noisy. */
const ROUNDS = Number(process.env.KILN_BENCH_ROUNDS ?? 3);
/** One models dir per dtype: both builds carry the same model id. */
const MODELS_DIR = join(process.env.KILN_BENCH_MODELS ?? join(import.meta.dir, "..", "..", "data", "bench-models"), DTYPE);
const SPEC = PRESETS["qwen2-0.5b"]!;
/** The one user message every client sends; the yardsticks run prompts of its templated token count. */
const PROMPT = "Write a short story about a lighthouse keeper who finds a message in a bottle on a quiet winter morning.";

async function ensureBenchModel(): Promise<string> {
  const spec = SPEC;
  const dir = join(MODELS_DIR, spec.id);
  if (!existsSync(join(dir, "kiln.json"))) {
    console.log(`building ${spec.id} (${DTYPE}) into ${dir} …`);
    await buildModel({ spec, dtypes: [DTYPE], outDir: dir, onProgress: (d: number, t: number, label: string) => d === t && console.log(`  ${label} done`) });
  }
  return dir;
}

/** kiln over HTTP: `clients` concurrent streaming requests per round; the median round stands for the level. */
async function kilnLevels(modelsDir: string, threads: number): Promise<{ levels: LevelSummary[]; peakRssMb: number }> {
  const server = await startServerProcess({ dataDir: tempDir("kiln-bench-"), modelsDir, env: { KILN_THREADS: String(threads) } });
  const body = { model: SPEC.id, messages: [{ role: "user", content: PROMPT }], max_tokens: NEW_TOKENS, temperature: 0, ignore_eos: true };
  try {
    await streamChat(server.url, server.key, { ...body, max_tokens: 4 }); // warm-up
    const levels: LevelSummary[] = [];
    for (const clients of LEVELS) {
      const rounds: LevelSummary[] = [];
      for (let r = 0; r < ROUNDS; r++) {
        const t0 = performance.now();
        const timings = await Promise.all(Array.from({ length: clients }, () => streamChat(server.url, server.key, body)));
        rounds.push(summarize(clients, timings, performance.now() - t0));
        for (const t of timings) expect(t.outputTokens).toBe(NEW_TOKENS);
      }
      const s = medianBy(rounds, (x) => x.outputTokPerSec);
      levels.push(s);
      console.log(`kiln ${clients} clients: ${s.outputTokPerSec.toFixed(1)} tok/s (rounds: ${rounds.map((x) => x.outputTokPerSec.toFixed(1)).join(", ")})`);
    }
    return { levels, peakRssMb: await server.peakRssMb() };
  } finally {
    expect(await server.stop()).toBe(0);
  }
}

test(
  "chat throughput: kiln vs a direct ONNX Runtime loop",
  async () => {
    const modelDir = await ensureBenchModel();
    const threads = navigator.hardwareConcurrency;
    const tokenizer = await loadTokenizer(readModelFolder(modelDir, SPEC.id));
    const promptTokens = tokenizer.encodeChat([{ role: "user", content: PROMPT }], null).length;

    // kiln first, while this process holds nothing but HTTP clients; the in-process yardsticks come after it stops.
    const kiln = await kilnLevels(MODELS_DIR, threads);

    const engineModel = await loadEngineModel(modelDir, DTYPE, threads);
    const engine: number[] = [];
    for (const batch of LEVELS) {
      engine.push(await engineDecodeBench(engineModel, { batch, promptTokens, newTokens: NEW_TOKENS, rounds: ROUNDS }));
      console.log(`engine batch ${batch}: ${engine[engine.length - 1]!.toFixed(1)} tok/s`);
    }
    await engineModel.dispose();

    const direct: number[] = [];
    for (const batch of LEVELS) {
      const r = await directDecodeBench({ modelDir, dtype: DTYPE, batch, promptTokens, newTokens: NEW_TOKENS, threads, rounds: ROUNDS });
      direct.push(r.tokPerSec);
      console.log(`direct batch ${batch}: ${r.tokPerSec.toFixed(1)} tok/s (step p50 ${r.stepMsP50.toFixed(1)} ms)`);
    }

    console.log(`\nmodel ${SPEC.id}, ${DTYPE}, prompt ${promptTokens} tokens, ${NEW_TOKENS} new tokens, ${threads} threads, median of ${ROUNDS} rounds\n`);
    const rows = LEVELS.map((_, i) => ({ direct: direct[i]!, engine: engine[i]!, kiln: kiln.levels[i]! }));
    console.log(renderTable(rows, kiln.peakRssMb, kiln.levels[0]!.outputTokPerSec));
    console.log(targetLines(rows).join("\n"));
  },
  3_600_000,
);
