// `bun run bench`: the 0.5B-shape model, direct ONNX Runtime loop vs kiln over HTTP at 1/4/8/16, one table.
import { expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { buildModel, PRESETS, type Dtype } from "../../build/model/index.ts";
import { tempDir } from "../helpers/kiln.ts";
import { directDecodeBench } from "./direct-ort.ts";
import { renderTable, summarize, targetLines, type LevelSummary } from "./metrics.ts";
import { startServerProcess } from "./server-process.ts";
import { streamChat } from "./stream-client.ts";

const LEVELS = [1, 4, 8, 16];
/** int8 (DynamicQuantizeMatMul) by default: on CPU it gains the most from batching (q4 is faster alone, slower at 16). */
const DTYPE = (process.env.KILN_BENCH_DTYPE ?? "int8") as Dtype;
const NEW_TOKENS = Number(process.env.KILN_BENCH_TOKENS ?? 64);
/** One models dir per dtype: both builds carry the same model id. */
const MODELS_DIR = join(process.env.KILN_BENCH_MODELS ?? join(import.meta.dir, "..", "..", "data", "bench-models"), DTYPE);
const SPEC = PRESETS["qwen2-0.5b"]!;
/** A user message that, with the chat template, comes to about 32 prompt tokens. */
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

test(
  "chat throughput: kiln vs a direct ONNX Runtime loop",
  async () => {
    const modelDir = await ensureBenchModel();
    const threads = navigator.hardwareConcurrency;
    const direct: number[] = [];
    for (const batch of LEVELS) {
      const r = await directDecodeBench({ modelDir, dtype: DTYPE, batch, promptTokens: 32, newTokens: NEW_TOKENS, threads });
      direct.push(r.tokPerSec);
      console.log(`direct batch ${batch}: ${r.tokPerSec.toFixed(1)} tok/s (step p50 ${r.stepMsP50.toFixed(1)} ms)`);
    }

    const server = await startServerProcess({
      dataDir: tempDir("kiln-bench-"),
      modelsDir: MODELS_DIR,
      env: { KILN_THREADS: String(threads) },
    });
    const id = SPEC.id;
    const body = { model: id, messages: [{ role: "user", content: PROMPT }], max_tokens: NEW_TOKENS, temperature: 0, ignore_eos: true };
    await streamChat(server.url, server.key, { ...body, max_tokens: 4 }); // warm-up
    const kiln: LevelSummary[] = [];
    try {
      for (const clients of LEVELS) {
        const t0 = performance.now();
        const timings = await Promise.all(Array.from({ length: clients }, () => streamChat(server.url, server.key, body)));
        const s = summarize(clients, timings, performance.now() - t0);
        kiln.push(s);
        console.log(`kiln ${clients} clients: ${s.outputTokPerSec.toFixed(1)} tok/s`);
        for (const t of timings) expect(t.outputTokens).toBeGreaterThan(0);
      }
      const rss = await server.peakRssMb();
      console.log(`\nmodel ${id}, ${DTYPE}, prompt ≈32 tokens, ${NEW_TOKENS} new tokens, ${threads} threads\n`);
      const rows = LEVELS.map((_, i) => ({ direct: direct[i]!, kiln: kiln[i]! }));
      console.log(renderTable(rows, rss, kiln[0]!.outputTokPerSec));
      console.log(targetLines(rows).join("\n"));
    } finally {
      expect(await server.stop()).toBe(0);
    }
  },
  3_600_000,
);
