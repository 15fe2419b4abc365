// The image worker on the real built tiny model (kiln-tiny-image-v1: 128², Euler trailing, int64 timesteps) and its
// float32-timestep and latent_parameters variants; the sampler on its UNet keeps an edit's unmasked latents.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { buildImageModel, IMAGE_PRESETS, imageVariant, type ImageVariantOptions } from "../../src/modelgen/index.ts";
import type { RenderRequest } from "../../src/protocol/image.ts";
import { type DiffusionModel, loadDiffusion } from "../../workers/image/load-diffusion.ts";
import { rgbToPlanes } from "../../workers/image/pixels.ts";
import { sampleLatents } from "../../workers/image/sampler.ts";
import { encodeImages } from "../../workers/image/vae.ts";
import { tempDir } from "../helpers/kiln.ts";
import { tinyImageModelDir } from "../helpers/tiny-model.ts";
import { ImageWorkerClient, type Rendered } from "./image-worker-client.ts";

let dir = "";
let w: ImageWorkerClient;
let promptIds: number[] = [];
let emptyIds: number[] = [];

/** CLIP-style ids: start, tokens, end, padded with the end id to 77. */
function clipIds(tokens: number[]): number[] {
  const config = JSON.parse(readFileSync(join(dir, "text_encoder", "config.json"), "utf8")) as { bos_token_id: number; eos_token_id: number };
  const ids = [config.bos_token_id, ...tokens, config.eos_token_id];
  return [...ids, ...Array<number>(77 - ids.length).fill(config.eos_token_id)];
}

const request = (over: Partial<RenderRequest> = {}): RenderRequest => ({ promptIds, guidance: 0, width: 128, height: 128, steps: 2, seed: 1, ...over });
const initImage = (width: number, height: number) => Uint8Array.from({ length: width * height * 3 }, (_, i) => (i * 13 + ((i / 384) | 0) * 7) % 256);

beforeAll(async () => {
  dir = await tinyImageModelDir();
  promptIds = clipIds([300, 301, 302, 303]);
  emptyIds = clipIds([]);
  w = new ImageWorkerClient();
  expect((await w.load(dir, 4)).type).toBe("loaded");
});

afterAll(async () => {
  await w.shutdown();
});

describe("tiny image model", () => {
  test("two sizes at once; consecutive seeds give distinct images, each the same as rendered alone", async () => {
    const alone = await w.rendered("alone", request({ seed: 5 }));
    const [a, b, c, wide] = await Promise.all([
      w.rendered("s5", request({ seed: 5 })),
      w.rendered("s6", request({ seed: 6 })),
      w.rendered("s7", request({ seed: 7 })),
      w.rendered("wide", request({ width: 256, height: 128, seed: 1 })),
    ]);
    expect(a.rgb).toEqual(alone.rgb);
    expect(b.rgb).not.toEqual(a.rgb);
    expect(c.rgb).not.toEqual(b.rgb);
    expect([wide.width, wide.height, wide.rgb.length]).toEqual([256, 128, 256 * 128 * 3]);
  });

  test("with guidance: the same bytes alone and batched", async () => {
    const req = request({ seed: 3, guidance: 3, uncondIds: emptyIds, steps: 3 });
    const alone = await w.rendered("g-alone", req);
    const [again] = await Promise.all([w.rendered("g-batched", req), w.rendered("g-other", request({ seed: 4, steps: 1 }))]);
    expect(again.rgb).toEqual(alone.rgb);
  });

  test("sizes the UNet's halvings cannot take are refused, not retryably", async () => {
    const end = await w.render("odd", request({ width: 136 }));
    expect(end).toMatchObject({ type: "render_failed", retryable: false });
    expect((end as { message: string }).message).toContain("multiples of 16");
  });

  test("an edit with a mask renders, the same with the same seed", async () => {
    const mask = Float32Array.from({ length: 16 * 16 }, (_, i) => (i % 16 < 8 ? 1 : 0));
    const req = request({ seed: 2, steps: 4, init: { rgb: initImage(128, 128), strength: 0.6, mask } });
    const [a, b] = await Promise.all([w.rendered("e1", req), w.rendered("e2", req)]);
    expect(a.rgb).toEqual(b.rgb);
  });
});

describe("the sampler on the tiny model's UNet", () => {
  let model: DiffusionModel;
  beforeAll(async () => {
    model = await loadDiffusion({ dir, threads: 1 });
  });
  afterAll(async () => {
    await model.dispose();
  });

  test("unmasked latent cells end exactly at the init image's latents", async () => {
    const [init] = await encodeImages(model.encoder!, model.vae, [rgbToPlanes(initImage(128, 128), 128, 128)], 128, 128);
    const mask = Float32Array.from({ length: 256 }, (_, i) => ((i >> 4) < 8 ? 1 : 0));
    const [cond] = await model.text.encode([promptIds]);
    const seen = await sampleLatents({ unet: model.unet.session, scheduler: model.scheduler, shape: { channels: 4, height: 16, width: 16 }, cond: cond!, guidance: 0, seed: 8, steps: 4, init: { latents: init!, strength: 0.75, mask } });
    expect(seen.length).toBe(4);
    const last = seen.at(-1)!;
    let changed = 0;
    for (let i = 0; i < last.length; i++) {
      if (mask[i % 256] === 0) expect(last[i]).toBe(init![i]!);
      else if (last[i] !== init![i]) changed++;
    }
    expect(changed).toBe(4 * 128);
  });
});

describe("variants of the tiny model", () => {
  const built = new Map<string, Promise<string>>();
  /** Builds a variant of the tiny preset once into a temp dir (a few hundred ms). */
  function variant(options: ImageVariantOptions): Promise<string> {
    const key = JSON.stringify(options);
    let d = built.get(key);
    if (!d) {
      const spec = imageVariant(IMAGE_PRESETS["tiny-image"]!, options);
      const out = join(tempDir("kiln-image-variant-"), spec.id);
      d = buildImageModel({ spec, outDir: out }).then(() => out);
      built.set(key, d);
    }
    return d;
  }

  async function renderOn(folder: string, jobs: [string, RenderRequest][]): Promise<Rendered[]> {
    const v = new ImageWorkerClient();
    try {
      expect((await v.load(folder, 4)).type).toBe("loaded");
      return await Promise.all(jobs.map(([id, r]) => v.rendered(id, r)));
    } finally {
      await v.shutdown();
    }
  }

  test("float32 timesteps: the same images as the int64 graph (trailing timesteps are whole)", async () => {
    const jobs: [string, RenderRequest][] = [["t2i", request({ seed: 9, steps: 4 })], ["edit", request({ seed: 9, init: { rgb: initImage(128, 128), strength: 0.5 } })]];
    const [base, floats] = await Promise.all([renderOn(dir, jobs), renderOn(await variant({ timestepType: "float32" }), jobs)]);
    expect(floats.map((r) => r.rgb)).toEqual(base.map((r) => r.rgb));
  });

  test("latent_parameters: an edit takes the mean and matches the latent_sample folder", async () => {
    const jobs: [string, RenderRequest][] = [["edit", request({ seed: 4, init: { rgb: initImage(128, 128), strength: 0.8 } })]];
    const [base, params] = await Promise.all([renderOn(dir, jobs), renderOn(await variant({ vaeEncoderOutput: "latent_parameters" }), jobs)]);
    expect(params[0]!.rgb).toEqual(base[0]!.rgb);
  });

  test("Euler ancestral renders deterministically", async () => {
    const jobs: [string, RenderRequest][] = [["a", request({ seed: 12, steps: 3 })], ["b", request({ seed: 12, steps: 3 })]];
    const [a, b] = await renderOn(await variant({ scheduler: "EulerAncestralDiscreteScheduler" }), jobs);
    expect(a!.rgb).toEqual(b!.rgb);
  });
});
