// `npm run bench -- --embeddings`: embedding throughput of a real kiln process over HTTP on the bench-size embedding
// preset (kiln-embed-small-v1, all-MiniLM-L6-v2's shape), at 1 and 16 concurrent clients, in inputs per second,
// against a bare ONNX Runtime loop over the same graph (the worker's own encoder runner and pooling, pre-tokenized
// rows) running the batches those clients' requests add up to; the two take turns. Each request carries
// KILN_BENCH_EMBED_INPUTS inputs; each client sends KILN_BENCH_EMBED_REQUESTS requests per round
// (KILN_BENCH_EMBED_ROUNDS rounds); KILN_BENCH_EMBED_PRESET names another preset.
import { expect, test } from "bun:test";
import { loadavg } from "node:os";
import { join } from "node:path";
import { embedTokenizer } from "../../src/embeddings/embed-tokenizer.ts";
import { EMBEDDING_PRESETS, installModel } from "../../src/modelgen/index.ts";
import { readEmbeddingFolder } from "../../src/models/embedding-folder.ts";
import { describeCpu, readCpuInfo } from "../../src/native/cpu.ts";
import { embedLoadSpec } from "../../src/scheduler/embed-backend.ts";
import { loadEncoder } from "../../workers/embedding/encoder-runner.ts";
import { normalize, poolRow } from "../../workers/embedding/pooling.ts";
import { tempDir } from "../helpers/kiln.ts";
import { MODELS_BASE } from "./bench-model.ts";
import { markdownTable, percentile } from "./metrics.ts";
import { startServerProcess } from "./server-process.ts";

const PRESET = process.env.KILN_BENCH_EMBED_PRESET ?? "embed-small";
const INPUTS = Number(process.env.KILN_BENCH_EMBED_INPUTS ?? 8);
const PER_CLIENT = Number(process.env.KILN_BENCH_EMBED_REQUESTS ?? 8);
const ROUNDS = Number(process.env.KILN_BENCH_EMBED_ROUNDS ?? 3);
const LEVELS = [1, 16];
const WORDS = "the river carried sand and silt down to the wide sea where boats waited for the morning tide under a pale sky".split(" ");

/** Sentences of 6 to 40 words, deterministic: a retrieval corpus's passages, short and long. */
function sentence(i: number): string {
  const n = 6 + ((i * 7) % 35);
  return Array.from({ length: n }, (_, k) => WORDS[(i * 3 + k * 5) % WORDS.length]).join(" ") + ` (${i}).`;
}

const median = (v: number[]) => percentile(v, 50);

test(
  "embedding throughput at 1 and 16 clients, against a bare ONNX Runtime loop",
  async () => {
    const spec = EMBEDDING_PRESETS[PRESET];
    if (!spec) throw new Error(`no embedding preset "${PRESET}"`);
    const modelsDir = join(MODELS_BASE, "embeddings");
    const installed = await installModel(modelsDir, { spec, dtypes: ["fp32"] });
    console.log(`${spec.id}: ${installed.built ? "built" : "up to date"} in ${modelsDir}`);
    const model = { ...readEmbeddingFolder(installed.dir, spec.id), dir: installed.dir };
    const threads = navigator.hardwareConcurrency;
    const tokenizer = await embedTokenizer(model);
    const server = await startServerProcess({ dataDir: tempDir("kiln-bench-embed-"), modelsDir, env: { KILN_THREADS: String(threads), KILN_BUILTIN_MODELS: "none" } });
    const direct = await loadEncoder(embedLoadSpec(model, threads));
    const layout = model.embedding!;
    /** The request client `c` sends `r`-th: INPUTS sentences of its own. */
    const texts = (c: number, r: number) => Array.from({ length: INPUTS }, (_, k) => sentence((c * PER_CLIENT + r) * INPUTS + k));
    const embed = async (input: string[]): Promise<number[][]> => {
      const res = await fetch(`${server.url}/v1/embeddings`, {
        method: "POST", headers: { authorization: `Bearer ${server.key}`, "content-type": "application/json" }, body: JSON.stringify({ model: spec.id, input, encoding_format: "float" }),
      });
      expect(res.status).toBe(200);
      return ((await res.json()) as { data: { embedding: number[] }[] }).data.map((d) => d.embedding);
    };
    /** The bare loop's vectors for rows run as one batch: the same graph, padding, pooling and normalization. */
    const directBatch = async (rows: number[][]): Promise<Float32Array[]> => {
      const out = await direct.run(rows);
      return rows.map((_, b) => {
        const v = poolRow(out.hidden, b, out.seq, layout.dimensions, out.lengths[b]!, layout.pooling);
        return layout.normalize ? normalize(v) : v;
      });
    };
    const rows: string[][] = [];
    let agreement = 0;
    try {
      // Warm-up, and the check that both sides compute the same vectors.
      const first = texts(0, 0);
      const [served, bare] = [await embed(first), await directBatch(first.map((t) => tokenizer.encode(t)))];
      agreement = Math.max(...served.flatMap((v, i) => v.map((x, d) => Math.abs(x - bare[i]![d]!))));
      expect(agreement).toBeLessThanOrEqual(1e-5);
      for (const clients of LEVELS) {
        // Each request's rows, tokenized once for the bare loop (kiln tokenizes its own).
        const tokenized = Array.from({ length: clients }, (_, c) => Array.from({ length: PER_CLIENT }, (_, r) => texts(c, r).map((t) => tokenizer.encode(t))));
        const kiln: number[] = [], bare: number[] = [], ratios: number[] = [];
        for (let round = 0; round < ROUNDS; round++) {
          const t0 = performance.now();
          await Promise.all(Array.from({ length: clients }, async (_, c) => {
            for (let r = 0; r < PER_CLIENT; r++) await embed(texts(c, r));
          }));
          kiln.push((clients * PER_CLIENT * INPUTS) / ((performance.now() - t0) / 1000));
          // The bare loop runs what the clients' requests add up to: request r of every client in one batch.
          const t1 = performance.now();
          for (let r = 0; r < PER_CLIENT; r++) await directBatch(tokenized.flatMap((perClient) => perClient[r]!));
          bare.push((clients * PER_CLIENT * INPUTS) / ((performance.now() - t1) / 1000));
          ratios.push(kiln.at(-1)! / bare.at(-1)!);
        }
        rows.push([String(clients), String(clients * INPUTS), median(kiln).toFixed(0), median(bare).toFixed(0), median(ratios).toFixed(2), `${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}`]);
      }
    } finally {
      await direct.dispose();
      await server.stop();
    }
    console.log(`\ncpu: ${describeCpu(readCpuInfo())}`);
    console.log(
      `${spec.id} (${spec.layers} layers, hidden ${spec.hidden}), fp32, ${threads} ONNX Runtime threads, ${INPUTS} inputs of 6–40 words per request, ` +
        `${ROUNDS} rounds of ${PER_CLIENT} requests per client (medians); kiln and the bare loop agree within ${agreement.toExponential(1)}; load ${loadavg()[0]!.toFixed(2)}\n`,
    );
    console.log(markdownTable(["clients", "bare batch (inputs)", "kiln inputs/s", "direct inputs/s", "kiln/direct", "kiln/direct range"], rows));
    for (const r of rows) expect(Number(r[2])).toBeGreaterThan(0);
  },
  3_600_000,
);
