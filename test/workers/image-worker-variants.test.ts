// The image worker on export variants (float16 UNet, float timesteps, fixed batch and size, latent_parameters, no
// VAE encoder) and on folders it must refuse at load.
import { afterEach, describe, expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ImageWorkerClient, renderRequest } from "./image-worker-client.ts";
import { type ToyFolderOptions, writeToyFolder } from "./toy-diffusion.ts";

const workers: ImageWorkerClient[] = [];

async function start(dir: string, maxBatch = 4): Promise<ImageWorkerClient> {
  const w = new ImageWorkerClient();
  workers.push(w);
  const loaded = await w.load(dir, maxBatch);
  if (loaded.type !== "loaded") throw new Error(loaded.message);
  return w;
}

afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.shutdown()));
});

const UNCOND = [999, 1000, 1000, 1000, 1000, 1000, 1000, 1000];
const edit = (w = 64, h = 64) => ({ rgb: Uint8Array.from({ length: w * h * 3 }, (_, i) => (i * 7) % 256), strength: 0.5 });

describe("variants", () => {
  test("float16 UNet with float16 timesteps: renders, and matches the float32-timestep folder closely", async () => {
    const half = await start(writeToyFolder({ unet: { half: true, timestep: "float16" } }));
    const full = await start(writeToyFolder({ unet: { timestep: "float32" } }));
    const req = renderRequest({ seed: 9, steps: 3 });
    const [a, b] = await Promise.all([half.rendered("h", req), full.rendered("f", req)]);
    let worst = 0;
    for (let i = 0; i < a.rgb.length; i++) worst = Math.max(worst, Math.abs(a.rgb[i]! - b.rgb[i]!));
    expect(worst).toBeLessThanOrEqual(3);
  });

  test("a fixed batch of 1 with a shared length-1 timestep still runs guided renders of different schedules together", async () => {
    const w = await start(writeToyFolder({ latent: 8, unet: { batch: 1, timestepShape: [1] } }));
    const [a, b] = await Promise.all([
      w.rendered("g1", renderRequest({ guidance: 3, uncondIds: UNCOND, steps: 3 })),
      w.rendered("g2", renderRequest({ guidance: 2, uncondIds: UNCOND, steps: 5, seed: 2 })),
    ]);
    expect([a.rgb.length, b.rgb.length]).toEqual([64 * 64 * 3, 64 * 64 * 3]);
    const alone = await w.rendered("g1-alone", renderRequest({ guidance: 3, uncondIds: UNCOND, steps: 3 }));
    expect(alone.rgb).toEqual(a.rgb);
  });

  test("a fixed-size graph refuses other sizes, not retryably, and goes on", async () => {
    const w = await start(writeToyFolder({ latent: 8 }));
    const [bad, good] = await Promise.all([w.render("big", renderRequest({ width: 128 })), w.render("ok", renderRequest())]);
    expect(bad).toMatchObject({ type: "render_failed", retryable: false });
    expect((bad as { message: string }).message).toContain("only runs 8×8 latents");
    expect(good.type).toBe("rendered");
  });

  test("a fixed-size graph fails its load when the server would offer a size it cannot run, naming it; a fixed text length must match", async () => {
    const dir = writeToyFolder({ latent: 8, seqLen: 8 });
    const client = new ImageWorkerClient();
    workers.push(client);
    const refused = await client.load(dir, 4, 1, { sizes: [{ width: 64, height: 64 }, { width: 128, height: 64 }], textLength: 8 });
    expect(refused).toMatchObject({ type: "load_error", message: expect.stringContaining("the size 128×64 cannot be rendered") });
    const other = new ImageWorkerClient();
    workers.push(other);
    expect(await other.load(dir, 4, 1, { sizes: [{ width: 64, height: 64 }], textLength: 77 })).toMatchObject({ type: "load_error", message: expect.stringContaining("text encoder takes 8 text positions") });
    const fine = new ImageWorkerClient();
    workers.push(fine);
    expect((await fine.load(dir, 4, 1, { sizes: [{ width: 64, height: 64 }], textLength: 8 })).type).toBe("loaded");
  });

  test("a static 0-D timestep, int64: renders", async () => {
    const w = await start(writeToyFolder({ unet: { timestepShape: [] } }));
    await Promise.all([w.rendered("s1", renderRequest({ steps: 2 })), w.rendered("s2", renderRequest({ steps: 3, seed: 4 }))]);
  });

  test("a latent_parameters VAE encoder edits exactly like a latent_sample one whose output is its mean", async () => {
    // The toy encoders share the weights of their first 4 output channels.
    const params = await start(writeToyFolder({ encoder: "latent_parameters" }));
    const plain = await start(writeToyFolder({ encoder: "latent_sample" }));
    const req = renderRequest({ init: edit() });
    const [a, b] = await Promise.all([params.rendered("lp", req), plain.rendered("ls", req)]);
    expect(a.timings.encodeMs).toBeGreaterThan(0);
    expect(a.rgb).toEqual(b.rgb);
  });

  test("a shifted, rescaled VAE config renders", async () => {
    const w = await start(writeToyFolder({ scalingFactor: 1.5, shiftFactor: 0.1 }));
    await w.rendered("shift", renderRequest({ init: edit() }));
  });

  test("a folder without vae_encoder/ loads; an edit on it fails clearly, not retryably", async () => {
    const w = await start(writeToyFolder({ encoder: null }));
    const end = await w.render("edit", renderRequest({ init: edit() }));
    expect(end).toMatchObject({ type: "render_failed", retryable: false });
    expect((end as { message: string }).message).toContain("no VAE encoder");
    await w.rendered("t2i", renderRequest());
  });

  test("Euler ancestral with v_prediction and leading spacing renders deterministically", async () => {
    const w = await start(writeToyFolder({ scheduler: { _class_name: "EulerAncestralDiscreteScheduler", prediction_type: "v_prediction", timestep_spacing: "leading" } }));
    const [a, b] = await Promise.all([w.rendered("a1", renderRequest({ seed: 3, steps: 4 })), w.rendered("a2", renderRequest({ seed: 3, steps: 4 }))]);
    expect(a.rgb).toEqual(b.rgb);
  });
});

describe("load errors", () => {
  async function loadError(dir: string): Promise<string> {
    const w = new ImageWorkerClient();
    workers.push(w);
    const end = await w.load(dir);
    expect(end.type).toBe("load_error");
    return (end as { message: string }).message;
  }

  test("a folder that does not exist", async () => {
    expect(await loadError("/nonexistent/kiln-image")).toContain("does not exist");
  });

  test("a folder without model_index.json or a graph", async () => {
    const dir = writeToyFolder();
    rmSync(join(dir, "unet", "model.onnx"));
    expect(await loadError(dir)).toContain("no unet/model.onnx");
    rmSync(join(dir, "model_index.json"));
    expect(await loadError(dir)).toContain("no model_index.json");
  });

  test("a graph that is not ONNX", async () => {
    const dir = writeToyFolder();
    writeFileSync(join(dir, "vae_decoder", "model.onnx"), "not a graph");
    expect(await loadError(dir)).toContain("vae_decoder/model.onnx does not load");
  });

  test("an inpainting UNet (9 input channels)", async () => {
    const dir = writeToyFolder();
    writeFileSync(join(dir, "unet", "config.json"), JSON.stringify({ in_channels: 9 }));
    expect(await loadError(dir)).toContain("the UNet takes 9 input channels and the VAE makes 4");
  });

  const refused: [string, ToyFolderOptions, string][] = [
    ["an unsupported scheduler", { scheduler: { _class_name: "DPMSolverMultistepScheduler" } }, "scheduler DPMSolverMultistepScheduler is not run by kiln"],
    ["karras sigmas", { scheduler: { use_karras_sigmas: true } }, "use_karras_sigmas is not run by kiln"],
  ];
  for (const [what, options, message] of refused) {
    test(what, async () => {
      expect(await loadError(writeToyFolder(options))).toContain(message);
    });
  }
});
