// Times the image worker's passes on an image preset: `bun test/load/image-worker-passes.ts [preset] [rounds]`.
// In process through the worker's own runners (text, UNet at 1 and 4 rows, VAE decode and encode), then whole
// renders through the real worker entry (1 image, then 4 at once), with the CPU model.
import { readFileSync } from "node:fs";
import { IMAGE_PRESETS } from "../../src/modelgen/index.ts";
import { loadDiffusion } from "../../workers/image/load-diffusion.ts";
import { decodeLatents, encodeImages } from "../../workers/image/vae.ts";
import { presetModelDir } from "../helpers/tiny-model.ts";
import { ImageWorkerClient } from "../workers/image-worker-client.ts";

const preset = process.argv[2] ?? "tiny-image";
const rounds = Number(process.argv[3] ?? 5);
const threads = Number(process.env.KILN_BENCH_THREADS ?? navigator.hardwareConcurrency);
const spec = IMAGE_PRESETS[preset] ?? (() => { throw new Error(`no image preset "${preset}"`); })();
const cpu = /^model name\s*:\s*(.+)$/m.exec(readFileSync("/proc/cpuinfo", "utf8"))?.[1] ?? "unknown CPU";
console.log(`${spec.id} on ${cpu} (${navigator.hardwareConcurrency} cores), ${threads} intra-op threads, median (min) of ${rounds} warm runs`);

const started = performance.now();
const dir = await presetModelDir(preset);
console.log(`folder ready in ${(performance.now() - started).toFixed(0)} ms: ${dir}`);

async function time(label: string, run: () => Promise<unknown>): Promise<void> {
  await run();
  const ms: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const t = performance.now();
    await run();
    ms.push(performance.now() - t);
  }
  ms.sort((a, b) => a - b);
  console.log(`${label.padEnd(34)} ${ms[rounds >> 1]!.toFixed(1).padStart(9)} ms (${ms[0]!.toFixed(1)})`);
}

const side = spec.resolution;
const latent = side / 8;
const model = await loadDiffusion({ dir, threads });
const ids = Array.from({ length: 77 }, (_, i) => (i < 5 ? 300 + i : spec.vocab - 1));
const [cond] = await model.text.encode([ids]);
const shape = { channels: 4, height: latent, width: latent };
const sample = Float32Array.from({ length: 4 * latent * latent }, (_, i) => Math.sin(i));
await time("text encoder, 1 prompt", () => model.text.encode([ids]));
for (const rows of [1, 2, 4]) {
  const batch = Array.from({ length: rows }, (_, i) => ({ sample, timestep: 999 - 250 * i, hidden: cond! }));
  await time(`UNet pass, ${rows} row(s) at ${side}²`, () => model.unet.run(batch, shape));
}
await time(`VAE decode, 1 image at ${side}²`, () => decodeLatents(model.decoder, model.vae, [sample], shape));
const image = new Float32Array(3 * side * side).fill(0.1);
await time(`VAE encode, 1 image at ${side}²`, () => encodeImages(model.encoder!, model.vae, [image], side, side));
await model.dispose();

const w = new ImageWorkerClient();
const loaded = await w.load(dir, 4, threads);
if (loaded.type !== "loaded") throw new Error(loaded.message);
const request = (seed: number) => ({ promptIds: ids, guidance: 0, width: side, height: side, steps: 4, seed });
await w.rendered("warm", request(0));
for (const n of [1, 4]) {
  const t = performance.now();
  const done = await Promise.all(Array.from({ length: n }, (_, i) => w.rendered(`n${n}-${i}`, request(i + 1))));
  const wall = performance.now() - t;
  const t0 = done[0]!.timings;
  console.log(`worker: ${n} image(s), 4 steps, ${side}²: ${wall.toFixed(0)} ms wall; first image's timings text ${t0.textMs.toFixed(1)}, denoise ${t0.denoiseMs.toFixed(1)}, decode ${t0.decodeMs.toFixed(1)} ms`);
}
await w.shutdown();
