// Image model folders: what the registry reads from the export layout and kiln.json, and the reasons it refuses one.
import { describe, expect, test } from "bun:test";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseDiffusionLayout } from "../../../src/models/diffusion-layout.ts";
import { diffusionFacts, readDiffusionFolder } from "../../../src/models/diffusion-folder.ts";
import { readModelFolder, scanModels } from "../../../src/models/registry.ts";
import { tempDir } from "../../helpers/kiln.ts";

/** A folder with the export layout's files (graphs as empty placeholders: the registry reads no graph). */
function folder(opts: { manifest?: object; encoder?: boolean; tokenizer?: "json" | "bpe" | "none"; unetLevels?: number } = {}): string {
  const dir = join(tempDir(), "sd-turbo-v1");
  const put = (rel: string, text = "") => {
    mkdirSync(join(dir, rel, ".."), { recursive: true });
    writeFileSync(join(dir, rel), text);
  };
  put("model_index.json", JSON.stringify({ _class_name: "ORTStableDiffusionPipeline" }));
  put("scheduler/scheduler_config.json", "{}");
  for (const g of ["text_encoder", "unet", "vae_decoder", ...(opts.encoder === false ? [] : ["vae_encoder"])]) put(`${g}/model.onnx`);
  put("text_encoder/config.json", JSON.stringify({ max_position_embeddings: 77 }));
  put("unet/config.json", JSON.stringify({ sample_size: 64, block_out_channels: Array(opts.unetLevels ?? 4).fill(32) }));
  put("vae_decoder/config.json", JSON.stringify({ block_out_channels: [8, 8, 8, 8], scaling_factor: 0.18215 }));
  if (opts.tokenizer === "json") put("tokenizer/tokenizer.json", "{}");
  if ((opts.tokenizer ?? "bpe") === "bpe") {
    put("tokenizer/vocab.json", "{}");
    put("tokenizer/merges.txt", "#version: 0.2\n");
  }
  if (opts.manifest) put("kiln.json", JSON.stringify(opts.manifest));
  return dir;
}

const MANIFEST = {
  kiln_manifest: 2, id: "kiln-test-image-v1", display_name: "Test Image", capabilities: { chat: false, image_generation: true },
  pricing: { per_image: 0.01 }, image: { resolution: 128, aspect_ratios: ["1:1", "2:1"], steps: { low: 1, medium: 3, high: 6 }, guidance_scale: 0, strength: 0.5, max_batch: 2 },
};

describe("image model folders", () => {
  test("a folder without kiln.json: id from its name, resolution from the UNet's sample size × the VAE scale, default sizes, free", () => {
    const m = readDiffusionFolder(folder(), "sd-turbo-v1");
    expect(m).toMatchObject({ id: "sd-turbo-v1", ownedBy: "operator", contextLength: 77, pricing: { perImage: null } });
    expect(m.capabilities).toEqual({ chat: false, tools: false, reasoning: false, vision: false, audio: false, image_generation: true });
    expect(m.diffusion).toMatchObject({ resolution: 512, vaeScale: 8, sizeMultiple: 64, steps: { low: 1, medium: 2, high: 4 }, guidanceScale: 0, strength: 0.6, maxBatch: 4, textLength: 77, edits: true });
    expect(m.diffusion!.sizes[0]).toEqual({ ratio: "1:1", width: 512, height: 512 });
  });

  test("kiln.json sets the id, price, sizes, steps, guidance, strength and batch; the registry serves the folder", () => {
    const dir = folder({ manifest: MANIFEST, unetLevels: 2 });
    const m = readModelFolder(dir, "whatever");
    expect(m).toMatchObject({ id: "kiln-test-image-v1", displayName: "Test Image", dir, pricing: { perImage: 0.01 }, batching: { maxBatch: 2 } });
    expect(m.diffusion).toMatchObject({ resolution: 128, sizeMultiple: 16, steps: { low: 1, medium: 3, high: 6 }, strength: 0.5 });
    expect(m.diffusion!.sizes).toEqual([{ ratio: "1:1", width: 128, height: 128 }, { ratio: "2:1", width: 192, height: 96 }]);
    expect(scanModels(join(dir, "..")).models.map((x) => x.id)).toEqual(["kiln-test-image-v1"]);
  });

  test("no VAE encoder: the model generates but cannot edit; a tokenizer.json alone is enough", () => {
    expect(readDiffusionFolder(folder({ encoder: false, tokenizer: "json" }), "sd-turbo-v1").diffusion!.edits).toBe(false);
  });

  test("refusals name what is wrong", () => {
    const broken = (f: (dir: string) => void) => {
      const dir = folder();
      f(dir);
      return () => readDiffusionFolder(dir, "sd-turbo-v1");
    };
    expect(broken((d) => rmSync(join(d, "unet", "model.onnx")))).toThrow("missing unet/model.onnx");
    expect(broken((d) => rmSync(join(d, "tokenizer"), { recursive: true }))).toThrow("missing tokenizer/tokenizer.json");
    expect(broken((d) => writeFileSync(join(d, "unet", "config.json"), "{"))).toThrow("unet/config.json is not valid JSON");
    expect(() => readDiffusionFolder(folder({ manifest: { ...MANIFEST, capabilities: { chat: true } } }), "x")).toThrow("generates images only");
    expect(() => readDiffusionFolder(folder({ manifest: { ...MANIFEST, image: { resolution: 100 } } }), "x")).toThrow('"image.resolution" 100 is not a multiple of 64');
    expect(() => readDiffusionFolder(folder({ manifest: { ...MANIFEST, pricing: { per_image: -1 } } }), "x")).toThrow("pricing.per_image");
  });

  test("the image block's own checks", () => {
    const facts = { vaeScale: 8, unetScale: 2, nativeResolution: 128, textLength: 77, edits: true };
    expect(() => parseDiffusionLayout({ steps: { ultra: 9 } }, facts)).toThrow("unknown qualities ultra");
    expect(() => parseDiffusionLayout({ steps: { low: 0 } }, facts)).toThrow('"image.steps.low"');
    expect(() => parseDiffusionLayout({ strength: 0 }, facts)).toThrow('"image.strength" must be a number in (0, 1]');
    expect(() => parseDiffusionLayout({ aspect_ratios: ["wide"] }, facts)).toThrow('aspect ratio "wide"');
    expect(() => parseDiffusionLayout({ max_batch: 0 }, facts)).toThrow('"image.max_batch"');
    expect(() => parseDiffusionLayout([], facts)).toThrow('"image" must be an object');
    expect(diffusionFacts(folder()).nativeResolution).toBe(512);
  });
});
