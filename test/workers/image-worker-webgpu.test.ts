// The image pipeline on the webgpu device (ONNX Runtime's webgpu EP; Mesa's lavapipe where there is no GPU): the tiny
// image model loads there with its compute on the GPU and renders what the CPU renders, up to fp32 reordering.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { RenderRequest } from "../../src/protocol/image.ts";
import type { LoadReport } from "../../src/protocol/supervisor.ts";
import { type DiffusionModel, loadDiffusion } from "../../workers/image/load-diffusion.ts";
import { sampleLatents } from "../../workers/image/sampler.ts";
import { tinyImageModelDir } from "../helpers/tiny-model.ts";
import { ImageWorkerClient, type Rendered } from "./image-worker-client.ts";

/*
 * Bounds. Both devices run the same fp32 graphs; they differ in the order sums are taken (tiled GPU kernels against
 * MLAS) and in the shader's exp/erf against the CPU's. fp32's unit roundoff is u = 2^-24 ≈ 6e-8; a reordered sum of K
 * terms typically moves by √K·u of its terms' magnitude (K·u at worst). The tiny UNet's longest sums (3×3 convolutions
 * over 64 concatenated channels) have K = 576: 1.4e-6 per layer; ~30 layers deep, independent errors add to
 * √30·1.4e-6 ≈ 8e-6 of a pass's output. Guidance (ε_u + g·(ε_c − ε_u), g = 3) can amplify it up to 1 + 2g = 7 times:
 * δ = 6e-5 of a step's update. Each Euler step adds its update (dσ·ε̂) to latents both sides carry on with, so after
 * step k the latents differ by at most δ·Σ_{j≤k} max|x_j − x_{j−1}|: LATENT_REL is δ, the sums read from the CPU's
 * latents (measured: 8.2e-5 after the first step, whose update's max is 32.6: 2.5e-6 of it, 24× inside the bound).
 * The text encoder (2 layers, K ≤ 128) gets 1e-5 of its output's largest value (measured: 8.3e-7 absolute).
 * Pixels: the decoder sees latents differing by ~1e-4 (÷ the VAE's 0.18215 scaling: ~5e-4), while one 8-bit unit is
 * 2/255 ≈ 7.8e-3 of the VAE's [-1, 1] range, so a pixel moves only where its value straddles a rounding boundary:
 * PIXEL_BOUND is 1 (measured: 1, on both renders).
 */
const LATENT_REL = 6e-5;
const TEXT_REL = 1e-5;
const PIXEL_BOUND = 1;
/**
 * Lavapipe builds every shader on the CPU. Measured on 2 cores: a load with Mesa's shader cache took 3 s, one without
 * it 51 s alone and 80 s beside the CPU worker; a 4-step guided 128² render 1.3–3.2 s (the CPU's: 30–50 ms). A test
 * gets what the supervisor gives a load (DEFAULT_LOAD_TIMEOUT_MS), so a machine's first run passes too.
 */
const GPU_TIMEOUT_MS = 300_000;

let dir = "";
let promptIds: number[] = [];
let emptyIds: number[] = [];

/** CLIP-style ids: start, tokens, end, padded with the end id to 77. */
function clipIds(tokens: number[]): number[] {
  const config = JSON.parse(readFileSync(join(dir, "text_encoder", "config.json"), "utf8")) as { bos_token_id: number; eos_token_id: number };
  const ids = [config.bos_token_id, ...tokens, config.eos_token_id];
  return [...ids, ...Array<number>(77 - ids.length).fill(config.eos_token_id)];
}

const initImage = (width: number, height: number) => Uint8Array.from({ length: width * height * 3 }, (_, i) => (i * 13 + ((i / 384) | 0) * 7) % 256);

function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  expect(a.length).toBe(b.length);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]! - b[i]!));
  return m;
}

const maxAbs = (a: ArrayLike<number>) => maxAbsDiff(a, new Float32Array(a.length));

/** The ops each provider ran, per graph, from a load report's placement line ("unet: Prov: 3 Conv, …; Prov2: …"). */
function opsOn(report: LoadReport, provider: string): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const part of (report.placement ?? "").split(" | ")) {
    const [graph, rest] = part.split(/: (.*)/s) as [string, string];
    const seg = rest.split("; ").find((s) => s.startsWith(`${provider}: `));
    out[graph] = seg ? seg.slice(provider.length + 2).split(", ").map((c) => c.split(" ")[1]!) : [];
  }
  return out;
}

beforeAll(async () => {
  dir = await tinyImageModelDir();
  promptIds = clipIds([300, 301, 302, 303]);
  emptyIds = clipIds([]);
});

describe("tiny image model on webgpu", () => {
  const workers: ImageWorkerClient[] = [];
  afterAll(async () => {
    await Promise.all(workers.map((w) => w.shutdown()));
  });

  async function started(device: "cpu" | "webgpu"): Promise<{ w: ImageWorkerClient; report: LoadReport | undefined }> {
    const w = new ImageWorkerClient();
    workers.push(w);
    const loaded = await w.load(dir, 4, 1, { sizes: [{ width: 128, height: 128 }], textLength: 77, device });
    if (loaded.type !== "loaded") throw new Error(`the ${device} worker did not load: ${loaded.message}`);
    return { w, report: loaded.report };
  }

  test("loads with the graphs' convolutions and matmuls on the GPU, and renders what the CPU renders", async () => {
    const [cpu, gpu] = await Promise.all([started("cpu"), started("webgpu")]);
    expect(cpu.report).toEqual({ device: "cpu", dtype: "fp32" });
    expect(gpu.report).toMatchObject({ device: "webgpu", dtype: "fp32" });
    const onGpu = opsOn(gpu.report!, "WebGpuExecutionProvider");
    const onCpu = opsOn(gpu.report!, "CPUExecutionProvider");
    expect(Object.keys(onGpu)).toEqual(["text_encoder", "unet", "vae_decoder", "vae_encoder"]);
    expect(onGpu.unet).toEqual(expect.arrayContaining(["Conv", "MatMul", "Gemm"]));
    for (const graph of Object.keys(onCpu)) expect(onCpu[graph]!.filter((op) => ["Conv", "MatMul", "Gemm"].includes(op))).toEqual([]);

    const jobs: [string, RenderRequest][] = [
      ["guided", { promptIds, uncondIds: emptyIds, guidance: 3, width: 128, height: 128, steps: 4, seed: 7 }],
      ["edit", { promptIds, guidance: 0, width: 128, height: 128, steps: 4, seed: 8, init: { rgb: initImage(128, 128), strength: 0.6 } }],
    ];
    const run = (w: ImageWorkerClient): Promise<Rendered[]> => Promise.all(jobs.map(([id, r]) => w.rendered(id, r)));
    const [onCpuDevice, onGpuDevice] = await Promise.all([run(cpu.w), run(gpu.w)]);
    for (let i = 0; i < jobs.length; i++) {
      expect(maxAbsDiff(onGpuDevice[i]!.rgb, onCpuDevice[i]!.rgb)).toBeLessThanOrEqual(PIXEL_BOUND);
    }
  }, GPU_TIMEOUT_MS);
});

describe("the tiny model's denoising loop on both devices", () => {
  const models: DiffusionModel[] = [];
  afterAll(async () => {
    await Promise.all(models.map((m) => m.dispose()));
  });

  test("text embeddings and every step's latents agree within the fp32 reordering bounds", async () => {
    const [cpu, gpu] = await Promise.all((["cpu", "webgpu"] as const).map((device) => loadDiffusion({ dir, threads: 1, device, sizes: [{ width: 128, height: 128 }], textLength: 77 })));
    models.push(cpu!, gpu!);
    const steps = async (m: DiffusionModel) => {
      const [cond, uncond] = await m.text.encode([promptIds, emptyIds]);
      const latents = await sampleLatents({ unet: m.unet.session, scheduler: m.scheduler, shape: { channels: 4, height: 16, width: 16 }, cond: cond!, uncond: uncond!, guidance: 3, seed: 7, steps: 4 });
      return { cond: cond!.data, latents };
    };
    const [a, b] = [await steps(cpu!), await steps(gpu!)];
    expect(maxAbsDiff(b.cond, a.cond)).toBeLessThanOrEqual(TEXT_REL * maxAbs(a.cond));
    expect(b.latents.length).toBe(5);
    // The starting noise is the seed's alone: identical on both devices.
    expect(maxAbsDiff(b.latents[0]!, a.latents[0]!)).toBe(0);
    let updates = 0;
    for (let k = 1; k < a.latents.length; k++) {
      updates += maxAbsDiff(a.latents[k]!, a.latents[k - 1]!);
      expect(maxAbsDiff(b.latents[k]!, a.latents[k]!)).toBeLessThanOrEqual(LATENT_REL * updates);
    }
  }, GPU_TIMEOUT_MS);
});
