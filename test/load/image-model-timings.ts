// Times an image preset's build and its graphs in onnxruntime-node: `bun test/load/image-model-timings.ts [preset] [rounds]`.
import { readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as ort from "onnxruntime-node";
import { listFiles } from "../../build/model/content-hash.ts";
import { buildImageModel, IMAGE_PRESETS, imageParamCounts } from "../../build/model/index.ts";

const preset = process.argv[2] ?? "image-small";
const rounds = Number(process.argv[3] ?? 5);
const spec = IMAGE_PRESETS[preset] ?? (() => { throw new Error(`no image preset "${preset}" (${Object.keys(IMAGE_PRESETS).join(", ")})`); })();
const threads = Number(process.env.KILN_BENCH_THREADS ?? 2);

const cpu = /^model name\s*:\s*(.+)$/m.exec(readFileSync("/proc/cpuinfo", "utf8"))?.[1] ?? "unknown CPU";
console.log(`${spec.id} on ${cpu}, ${threads} intra-op threads, median (min) of ${rounds} warm runs`);

const dir = join(tmpdir(), `kiln-image-timings-${process.pid}`);
try {
  const started = performance.now();
  await buildImageModel({ spec, outDir: dir });
  const buildMs = performance.now() - started;
  const bytes = listFiles(dir).reduce((s, f) => s + statSync(join(dir, f)).size, 0);
  const params = imageParamCounts(spec);
  console.log(`build ${buildMs.toFixed(0)} ms, folder ${(bytes / 2 ** 20).toFixed(1)} MiB, parameters ${Object.entries(params).map(([g, n]) => `${g} ${(n / 1e6).toFixed(2)}M`).join(", ")}`);

  const open = (g: string) => ort.InferenceSession.create(join(dir, g, "model.onnx"), { intraOpNumThreads: threads });
  const time = async (label: string, run: () => Promise<unknown>) => {
    await run();
    const ms: number[] = [];
    for (let i = 0; i < rounds; i++) {
      const t = performance.now();
      await run();
      ms.push(performance.now() - t);
    }
    ms.sort((a, b) => a - b);
    console.log(`${label.padEnd(28)} ${ms[rounds >> 1]!.toFixed(1).padStart(8)} ms (${ms[0]!.toFixed(1)})`);
  };
  const zeros = (dims: number[], v = 0.5) => new ort.Tensor("float32", new Float32Array(dims.reduce((a, b) => a * b, 1)).fill(v), dims);
  const latent = spec.resolution / 8;

  const text = await open("text_encoder");
  const ids = new ort.Tensor("int64", new BigInt64Array(77).fill(BigInt(spec.vocab - 1)), [1, 77]);
  await time("text_encoder B=1", () => text.run({ input_ids: ids }));
  const unet = await open("unet");
  for (const B of [1, 4]) {
    const timestep = spec.timestepType === "int64" ? new ort.Tensor("int64", BigInt64Array.from([999n]), [1]) : new ort.Tensor("float32", Float32Array.from([999]), [1]);
    const feeds = { sample: zeros([B, 4, latent, latent]), timestep, encoder_hidden_states: zeros([B, 77, spec.text.hidden]) };
    await time(`unet B=${B} (${latent}×${latent})`, () => unet.run(feeds));
  }
  const decoder = await open("vae_decoder");
  for (const B of [1, 4]) await time(`vae_decoder B=${B} (${spec.resolution}²)`, () => decoder.run({ latent_sample: zeros([B, 4, latent, latent]) }));
  const encoder = await open("vae_encoder");
  await time(`vae_encoder B=1 (${spec.resolution}²)`, () => encoder.run({ sample: zeros([1, 3, spec.resolution, spec.resolution]) }));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
