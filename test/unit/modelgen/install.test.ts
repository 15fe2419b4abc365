// ensureDefaultModel: builds the four built-in models once, skips identical builds, repairs damaged ones; the registry accepts the text ones.
import { afterAll, describe, expect, test } from "bun:test";
import { appendFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEFAULT_MEDIA_MODEL_ID, DEFAULT_MODEL_ID, ensureDefaultModel, TINY_EMBED_MODEL_ID, TINY_IMAGE_MODEL_ID } from "../../../src/modelgen/index.ts";
import { scanModels } from "../../../src/models/registry.ts";

const modelsDir = mkdtempSync(join(tmpdir(), "kiln-ensure-"));
afterAll(() => rmSync(modelsDir, { recursive: true, force: true }));

describe("ensureDefaultModel", () => {
  test("builds the default model, the tiny media, image and embedding models beside it, then leaves identical builds alone", async () => {
    const [dir, media, image, embed] = await ensureDefaultModel(modelsDir);
    expect([dir, media, image, embed]).toEqual([DEFAULT_MODEL_ID, DEFAULT_MEDIA_MODEL_ID, TINY_IMAGE_MODEL_ID, TINY_EMBED_MODEL_ID].map((id) => join(modelsDir, id)));
    const embedBefore = statSync(join(embed!, "onnx/model.onnx")).mtimeMs;
    const before = statSync(join(dir!, "onnx/model.onnx_data")).mtimeMs;
    const mediaBefore = statSync(join(media!, "onnx/decoder_model_merged.onnx_data")).mtimeMs;
    const imageBefore = statSync(join(image!, "unet/model.onnx_data")).mtimeMs;
    expect(await ensureDefaultModel(modelsDir)).toEqual([dir!, media!, image!, embed!]);
    expect(statSync(join(embed!, "onnx/model.onnx")).mtimeMs).toBe(embedBefore);
    expect(statSync(join(dir!, "onnx/model.onnx_data")).mtimeMs).toBe(before);
    expect(statSync(join(media!, "onnx/decoder_model_merged.onnx_data")).mtimeMs).toBe(mediaBefore);
    expect(statSync(join(image!, "unet/model.onnx_data")).mtimeMs).toBe(imageBefore);
    expect(readdirSync(modelsDir).sort()).toEqual([DEFAULT_MODEL_ID, DEFAULT_MEDIA_MODEL_ID, TINY_IMAGE_MODEL_ID, TINY_EMBED_MODEL_ID].sort()); // no temp folders left behind
    const manifest = JSON.parse(readFileSync(join(media!, "kiln.json"), "utf8"));
    expect([manifest.id, manifest.capabilities.vision, manifest.capabilities.audio, manifest.media.layout]).toEqual([DEFAULT_MEDIA_MODEL_ID, true, true, "kiln-omni"]);
    const imageManifest = JSON.parse(readFileSync(join(image!, "kiln.json"), "utf8"));
    expect([imageManifest.id, imageManifest.architecture, imageManifest.capabilities.image_generation]).toEqual([TINY_IMAGE_MODEL_ID, "stable-diffusion", true]);
    const { models, problems } = scanModels(modelsDir);
    // The embedding model is read as one (sentence-transformers layout): mean pooling, unit vectors, its trained sizes.
    expect(models.find((m) => m.id === TINY_EMBED_MODEL_ID)?.embedding).toEqual({ pooling: "mean", normalize: true, dimensions: 64, truncations: [16, 32, 64] });
    // The registry on this branch reads text folders only; the image folder is the server side's to accept.
    expect(problems.filter((p) => !p.folder.endsWith(TINY_IMAGE_MODEL_ID))).toEqual([]);
    expect(models.find((m) => m.id === DEFAULT_MEDIA_MODEL_ID)?.capabilities).toMatchObject({ vision: true, audio: true });
    expect(models.filter((m) => m.id === DEFAULT_MODEL_ID).map((m) => [m.id, m.defaultDtype, m.batching.leftPadding])).toEqual([[DEFAULT_MODEL_ID, "fp32", "exact"]]);
  });

  test("builds only the built-in models named (KILN_BUILTIN_MODELS), and refuses an id that is not one", async () => {
    const only = mkdtempSync(join(tmpdir(), "kiln-ensure-one-"));
    try {
      expect(await ensureDefaultModel(only, [DEFAULT_MODEL_ID])).toEqual([join(only, DEFAULT_MODEL_ID)]);
      expect(readdirSync(only)).toEqual([DEFAULT_MODEL_ID]);
      expect(await ensureDefaultModel(only, [])).toEqual([]);
      await expect(ensureDefaultModel(only, ["kiln-qwen2-0.5b-v1"])).rejects.toThrow(/not a built-in model/);
    } finally {
      rmSync(only, { recursive: true, force: true });
    }
  });

  test("rebuilds a damaged folder", async () => {
    const dir = join(modelsDir, DEFAULT_MODEL_ID);
    const image = join(modelsDir, TINY_IMAGE_MODEL_ID, "tokenizer", "merges.txt");
    const size = statSync(join(dir, "tokenizer.json")).size;
    const imageSize = statSync(image).size;
    appendFileSync(join(dir, "tokenizer.json"), " ");
    appendFileSync(image, "x y\n");
    await ensureDefaultModel(modelsDir);
    expect(statSync(join(dir, "tokenizer.json")).size).toBe(size);
    expect(statSync(image).size).toBe(imageSize);
    expect(readdirSync(modelsDir).sort()).toEqual([DEFAULT_MODEL_ID, DEFAULT_MEDIA_MODEL_ID, TINY_IMAGE_MODEL_ID, TINY_EMBED_MODEL_ID].sort());
  });
});
