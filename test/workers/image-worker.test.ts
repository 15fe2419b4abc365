// Starts the real image worker on a toy diffusion folder and drives its protocol as the image backend does.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import * as ort from "onnxruntime-node";
import { join } from "node:path";
import { waitFor } from "../helpers/wait-for.ts";
import { planesToRgb, rgbToPlanes } from "../../workers/image/pixels.ts";
import { decodeLatents, encodeImages } from "../../workers/image/vae.ts";
import { vaeDecoderIO, vaeEncoderIO, type GraphSession } from "../../workers/image/graph-io.ts";
import type { RenderRequest } from "../../src/protocol/image.ts";
import { ImageWorkerClient, renderRequest } from "./image-worker-client.ts";
import { writeToyFolder } from "./toy-diffusion.ts";

let dir = "";
let w: ImageWorkerClient;

beforeAll(async () => {
  dir = writeToyFolder();
  w = new ImageWorkerClient();
  expect((await w.load(dir, 4)).type).toBe("loaded");
});

afterAll(async () => {
  await w.shutdown();
});

const UNCOND = [0, 1000, 1000, 1000, 1000, 1000, 1000, 1000].map((v, i) => (i === 0 ? 999 : v));

describe("image worker", () => {
  test("answers pings with its memory and load", async () => {
    const pong = await w.ping();
    expect(pong.nonce).toBe(3);
    expect(pong.rssBytes).toBeGreaterThan(10 * 1024 * 1024);
    expect([pong.active, pong.queued]).toEqual([0, 0]);
  });

  test("renders two sizes at once, each at its size, with timings", async () => {
    const [a, b] = await Promise.all([w.rendered("size-a", renderRequest({ seed: 11 })), w.rendered("size-b", renderRequest({ width: 128, height: 64, seed: 12 }))]);
    expect([a.width, a.height, a.rgb.length]).toEqual([64, 64, 64 * 64 * 3]);
    expect([b.width, b.height, b.rgb.length]).toEqual([128, 64, 128 * 64 * 3]);
    for (const r of [a, b]) {
      expect(r.timings.denoiseMs).toBeGreaterThan(0);
      expect(r.timings.decodeMs).toBeGreaterThan(0);
      expect(r.timings.encodeMs).toBe(0);
    }
  });

  test("n renders with consecutive seeds: distinct images, each the same as rendered alone", async () => {
    const alone = await w.rendered("seed-alone", renderRequest({ seed: 41, steps: 3 }));
    const batch = await Promise.all([41, 42, 43].map((seed) => w.rendered(`seed-${seed}`, renderRequest({ seed, steps: 3 }))));
    expect(batch[0]!.rgb).toEqual(alone.rgb);
    expect(batch[1]!.rgb).not.toEqual(batch[0]!.rgb);
    expect(batch[2]!.rgb).not.toEqual(batch[1]!.rgb);
  });

  test("with guidance, the same seed gives the same bytes alone and batched with other sizes and schedules", async () => {
    const guided = renderRequest({ seed: 77, guidance: 4, uncondIds: UNCOND, steps: 4 });
    const alone = await w.rendered("guided-alone", guided);
    const [again] = await Promise.all([
      w.rendered("guided-batched", guided),
      w.rendered("other-1", renderRequest({ seed: 1, steps: 6 })),
      w.rendered("other-2", renderRequest({ seed: 2, width: 32, height: 96, guidance: 2, uncondIds: UNCOND })),
      w.rendered("other-3", renderRequest({ seed: 3, steps: 1 })),
    ]);
    expect(again.rgb).toEqual(alone.rgb);
  });

  test("a render that joins while a long one runs finishes first", async () => {
    const order: string[] = [];
    const long = w.rendered("long", renderRequest({ width: 128, height: 128, steps: 40 })).then((r) => (order.push("long"), r));
    await waitFor(async () => (await w.ping()).active, { what: "the long render to be denoising", intervalMs: 1 });
    await w.rendered("short", renderRequest({ steps: 2 })).then(() => order.push("short"));
    await long;
    expect(order).toEqual(["short", "long"]);
  });

  test("cancel drops a held render; a cancel for an unknown id is ignored", async () => {
    const ended = w.render("to-cancel", renderRequest({ width: 128, height: 128, steps: 500 }));
    await waitFor(async () => (await w.ping()).active, { what: "the render to be denoising", intervalMs: 1 });
    w.post({ type: "cancel", jobId: "to-cancel" });
    expect(await ended).toEqual({ type: "render_cancelled", jobId: "to-cancel" });
    const before = w.messages.length;
    w.post({ type: "cancel", jobId: "never-sent" });
    const pong = await w.ping();
    expect([pong.active, pong.queued]).toEqual([0, 0]);
    expect(w.messages.slice(before).map((m) => m.type)).toEqual(["pong"]);
  });

  test("a row whose UNet output is NaN fails retryably; its batch neighbour renders", async () => {
    const [poisoned, fine] = await Promise.all([
      w.render("nan", renderRequest({ promptIds: [0, 0, 0, 0, 0, 0, 0, 0] })),
      w.render("fine", renderRequest({ seed: 5 })),
    ]);
    expect(poisoned).toMatchObject({ type: "render_failed", jobId: "nan", retryable: true });
    expect(fine.type).toBe("rendered");
  });

  test("a request the model cannot run fails at once, not retryably", async () => {
    const bad = await w.render("bad-size", renderRequest({ width: 60 }));
    expect(bad).toMatchObject({ type: "render_failed", retryable: false });
    expect((bad as { message: string }).message).toContain("multiples of 8");
    const noUncond = await w.render("no-uncond", renderRequest({ guidance: 3 }));
    expect((noUncond as { message: string }).message).toContain("unconditional");
    // A message with no render at all is answered too, and the worker goes on.
    const empty = await w.render("empty", undefined as unknown as RenderRequest);
    expect(empty).toMatchObject({ type: "render_failed", jobId: "empty", retryable: false });
    expect((await w.render("after", renderRequest())).type).toBe("rendered");
  });
});

describe("edits", () => {
  const width = 64;
  const height = 64;
  const init = Uint8Array.from({ length: width * height * 3 }, (_, i) => (i * 37 + (i >> 7) * 11) % 256);
  // 8×8 latent cells: the left half may change, the right half is kept.
  const mask = Float32Array.from({ length: 64 }, (_, i) => (i % 8 < 4 ? 1 : 0));

  /** What the folder's VAE makes of the init image's own latents: the kept cells' pixels. */
  async function roundTrip(): Promise<Uint8Array> {
    const open = async (name: string) => (await ort.InferenceSession.create(join(dir, name, "model.onnx"))) as unknown as GraphSession;
    const vae = { scaling: 0.18215, shift: 0, channels: 4, scale: 8 };
    const enc = await open("vae_encoder");
    const dec = await open("vae_decoder");
    const [latents] = await encodeImages({ session: enc, io: vaeEncoderIO(enc) }, vae, [rgbToPlanes(init, width, height)], width, height);
    const [planes] = await decodeLatents({ session: dec, io: vaeDecoderIO(dec) }, vae, [latents!], { channels: 4, height: 8, width: 8 });
    return planesToRgb(planes!, width, height)!;
  }

  test("with a mask, kept cells end as the init image's latents; n renders share one VAE encoding", async () => {
    const req = renderRequest({ width, height, steps: 4, init: { rgb: init, strength: 0.75, mask } });
    const [a, b] = await Promise.all([w.rendered("edit-a", { ...req, seed: 1 }), w.rendered("edit-b", { ...req, seed: 2 })]);
    const expected = await roundTrip();
    let changed = 0;
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) {
        const kept = mask[(y >> 3) * 8 + (x >> 3)] === 0;
        for (let c = 0; c < 3; c++) {
          const i = (y * width + x) * 3 + c;
          if (kept) expect(a.rgb[i]).toBe(expected[i]!);
          else if (a.rgb[i] !== expected[i]) changed++;
        }
      }
    }
    expect(changed).toBeGreaterThan(1000);
    expect(a.rgb).not.toEqual(b.rgb);
    // One encoding shared by both; a later render of the same image takes it from the cache.
    expect(a.timings.encodeMs).toBeGreaterThan(0);
    const later = await w.rendered("edit-c", { ...req, seed: 3 });
    expect(later.timings.encodeMs).toBe(0);
  });
});
