// `npm run bench -- --images`: image generation throughput of a real kiln process on the benchmark-size image preset
// (kiln-image-small-v1) at 512×512, at 1 and 4 concurrent clients: images per minute, the share of the time the
// workers spent in the denoiser (from kiln's own stage counters), and the same pipeline as a bare ONNX Runtime loop
// over the same graphs (direct-diffusion.ts) at the same batch, the two taking turns. Each client sends
// KILN_BENCH_IMAGE_REQUESTS requests of one image at the default quality per round (KILN_BENCH_IMAGE_ROUNDS rounds);
// KILN_BENCH_IMAGE_PRESET names another preset (the README test runs the tiny one).
import { expect, test } from "bun:test";
import { loadavg } from "node:os";
import { join } from "node:path";
import { IMAGE_PRESETS, installModel } from "../../src/modelgen/index.ts";
import { loadPromptTokenizer } from "../../src/images/prompt-tokenizer.ts";
import { readDiffusionFolder } from "../../src/models/diffusion-folder.ts";
import { describeCpu, readCpuInfo } from "../../src/native/cpu.ts";
import { parsePrometheusText, samplesOf } from "../helpers/prom-text.ts";
import { tempDir } from "../helpers/kiln.ts";
import { MODELS_BASE } from "./bench-model.ts";
import { openDirectImages } from "./direct-diffusion.ts";
import { markdownTable, percentile } from "./metrics.ts";
import { startServerProcess } from "./server-process.ts";

const PRESET = process.env.KILN_BENCH_IMAGE_PRESET ?? "image-small";
const PER_CLIENT = Number(process.env.KILN_BENCH_IMAGE_REQUESTS ?? 4);
/** kiln and the bare loop take turns this many times per level. */
const ROUNDS = Number(process.env.KILN_BENCH_IMAGE_ROUNDS ?? 3);
const LEVELS = [1, 4];
const PROMPT = "a lighthouse on a cliff at dusk, waves below, warm light in its window";

const median = (values: number[]) => percentile(values, 50);

/** The stage seconds kiln's workers spent on delivered images, by stage, from /metrics. */
async function stageSeconds(url: string): Promise<Record<string, number>> {
  const families = parsePrometheusText(await (await fetch(`${url}/metrics`)).text());
  const out: Record<string, number> = {};
  for (const stage of ["text", "encode", "denoise", "decode"]) out[stage] = samplesOf(families, "kiln_image_stage_seconds_total", { stage }).reduce((sum, x) => sum + x.value, 0);
  return out;
}

test(
  "image generation throughput at 1 and 4 clients, against a bare ONNX Runtime loop",
  async () => {
    const spec = IMAGE_PRESETS[PRESET];
    if (!spec) throw new Error(`no image preset "${PRESET}"`);
    const modelsDir = join(MODELS_BASE, "images");
    const installed = await installModel(modelsDir, { spec, dtypes: ["fp32"] });
    console.log(`${spec.id}: ${installed.built ? "built" : "up to date"} in ${modelsDir}`);
    const entry = readDiffusionFolder(installed.dir, spec.id);
    const layout = entry.diffusion!;
    const side = layout.sizes[0]!.width;
    const steps = layout.steps.medium;
    const promptIds = loadPromptTokenizer(installed.dir, layout.textLength).encode(PROMPT).ids;
    const threads = navigator.hardwareConcurrency;
    const server = await startServerProcess({ dataDir: tempDir("kiln-bench-images-"), modelsDir, env: { KILN_THREADS: String(threads) } });
    const body = JSON.stringify({ model: spec.id, prompt: PROMPT, size: `${side}x${side}` });
    const generate = async () => {
      const res = await fetch(`${server.url}/v1/images/generations`, { method: "POST", headers: { authorization: `Bearer ${server.key}`, "content-type": "application/json" }, body });
      expect(res.status).toBe(200);
      await res.arrayBuffer();
    };
    const rows: string[][] = [];
    try {
      // One image first: the worker's sessions warm up.
      await generate();
      for (const clients of LEVELS) {
        const direct = await openDirectImages({ modelDir: installed.dir, batch: clients, side, steps, promptIds, threads });
        const directPng = await openDirectImages({ modelDir: installed.dir, batch: clients, side, steps, promptIds, threads, png: true });
        // kiln and the bare loop take turns, so a shared box's drift falls on both; medians of the rounds are reported.
        const kiln: number[] = [], shares: number[] = [], bare: number[] = [], bareShares: number[] = [], ratios: number[] = [], pngRatios: number[] = [];
        const stages = { text: 0, denoise: 0, decode: 0 };
        for (let round = 0; round < ROUNDS; round++) {
          const before = await stageSeconds(server.url);
          const t0 = performance.now();
          await Promise.all(Array.from({ length: clients }, async () => {
            for (let i = 0; i < PER_CLIENT; i++) await generate();
          }));
          const wall = (performance.now() - t0) / 1000;
          const after = await stageSeconds(server.url);
          for (const k of ["text", "denoise", "decode"] as const) stages[k] += after[k]! - before[k]!;
          kiln.push((clients * PER_CLIENT * 60) / wall);
          shares.push((after.denoise! - before.denoise!) / wall);
          const d = await direct.measure(PER_CLIENT);
          bare.push(d.imagesPerMinute);
          bareShares.push(d.denoiseShare);
          ratios.push(kiln.at(-1)! / d.imagesPerMinute);
          pngRatios.push(kiln.at(-1)! / (await directPng.measure(PER_CLIENT)).imagesPerMinute);
        }
        await Promise.all([direct.close(), directPng.close()]);
        const images = clients * PER_CLIENT * ROUNDS;
        const perImage = (k: keyof typeof stages) => ((stages[k] * 1000) / images).toFixed(0);
        rows.push([
          String(clients), String(images), median(kiln).toFixed(1), `${(median(shares) * 100).toFixed(0)}%`, `${perImage("text")} / ${perImage("denoise")} / ${perImage("decode")}`,
          median(bare).toFixed(1), `${(median(bareShares) * 100).toFixed(0)}%`, median(ratios).toFixed(2), `${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}`, median(pngRatios).toFixed(2),
        ]);
      }
    } finally {
      await server.stop();
    }
    console.log(`\ncpu: ${describeCpu(readCpuInfo())}`);
    console.log(`${spec.id}, ${side}×${side}, ${steps} Euler steps (quality medium), fp32, ${threads} ONNX Runtime threads, ${ROUNDS} rounds of ${PER_CLIENT} requests of 1 image per client (medians), load ${loadavg()[0]!.toFixed(2)}\n`);
    console.log(markdownTable(
      ["clients", "images", "kiln images/min", "kiln denoiser share", "kiln ms per image: text / denoise / decode", "direct images/min", "direct denoiser share", "kiln/direct", "kiln/direct range", "kiln/(direct + PNG)"],
      rows,
    ));
    for (const r of rows) expect(Number(r[2])).toBeGreaterThan(0);
  },
  3_600_000,
);
