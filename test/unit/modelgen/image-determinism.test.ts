// Image folders: byte-identical rebuilds, the exact layout and JSON files of an ORT Stable Diffusion export, kiln.json, install skips.
import { afterAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { folderContentHash, listFiles } from "../../../src/modelgen/content-hash.ts";
import { buildImageModel, IMAGE_PRESETS, imageSpecHash, imageVariant, installModel } from "../../../src/modelgen/index.ts";

const root = mkdtempSync(join(tmpdir(), "kiln-image-det-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const tiny = IMAGE_PRESETS["tiny-image"]!;
const sha = (p: string) => createHash("sha256").update(readFileSync(p)).digest("hex");
const json = (dir: string, rel: string) => JSON.parse(readFileSync(join(dir, rel), "utf8"));
const GRAPHS = ["text_encoder", "unet", "vae_decoder", "vae_encoder"];

describe("buildImageModel", () => {
  test("two builds of one spec are byte-identical; another seed changes the weights only", async () => {
    const started = performance.now();
    const a = await buildImageModel({ spec: tiny, outDir: join(root, "a") });
    const ms = performance.now() - started;
    const b = await buildImageModel({ spec: tiny, outDir: join(root, "b") });
    const c = await buildImageModel({ spec: { ...tiny, seed: 2 }, outDir: join(root, "c") });
    expect(a.files).toEqual([
      "kiln.json", "model_index.json", "scheduler/scheduler_config.json",
      "text_encoder/config.json", "text_encoder/model.onnx", "text_encoder/model.onnx_data",
      "tokenizer/merges.txt", "tokenizer/special_tokens_map.json", "tokenizer/tokenizer_config.json", "tokenizer/vocab.json",
      "unet/config.json", "unet/model.onnx", "unet/model.onnx_data",
      "vae_decoder/config.json", "vae_decoder/model.onnx", "vae_decoder/model.onnx_data",
      "vae_encoder/config.json", "vae_encoder/model.onnx", "vae_encoder/model.onnx_data",
    ]);
    expect(listFiles(a.dir)).toEqual(a.files);
    for (const f of a.files) expect(sha(join(b.dir, f))).toBe(sha(join(a.dir, f)));
    expect(folderContentHash(b.dir)).toBe(folderContentHash(a.dir));
    for (const g of GRAPHS) expect(sha(join(c.dir, g, "model.onnx_data"))).not.toBe(sha(join(a.dir, g, "model.onnx_data")));
    for (const f of ["tokenizer/vocab.json", "tokenizer/merges.txt", "unet/config.json", "model_index.json"]) expect(sha(join(c.dir, f))).toBe(sha(join(a.dir, f)));
    const bytes = a.files.reduce((s, f) => s + statSync(join(a.dir, f)).size, 0);
    console.log(`tiny-image: built in ${ms.toFixed(0)} ms, ${(bytes / 2 ** 20).toFixed(2)} MiB`);
    expect(bytes).toBeLessThan(4 * 2 ** 20);
  });

  test("kiln.json has the image manifest's shape, and its hashes match the spec and the files", () => {
    const dir = join(root, "a");
    expect(json(dir, "kiln.json")).toEqual({
      kiln_manifest: 2,
      id: "kiln-tiny-image-v1",
      display_name: "Kiln Tiny Image v1",
      owned_by: "kiln",
      created: 1767225600,
      architecture: "stable-diffusion",
      capabilities: { chat: false, tools: false, reasoning: false, vision: false, audio: false, image_generation: true },
      pricing: { input_per_million: 0, output_per_million: 0, per_image: 0.01 },
      image: {
        resolution: 128,
        aspect_ratios: ["1:1", "4:3", "3:4", "3:2", "2:3", "16:9", "9:16", "2:1", "1:2"],
        steps: { low: 1, medium: 2, high: 4 },
        guidance_scale: 0,
        strength: 0.6,
        max_batch: 4,
      },
      build: { seed: 1, spec_hash: imageSpecHash(tiny), content_hash: folderContentHash(dir) },
    });
  });

  test("model_index.json, the scheduler and the component configs follow diffusers and transformers", () => {
    const dir = join(root, "a");
    expect(json(dir, "model_index.json")).toEqual({
      _class_name: "ORTStableDiffusionPipeline", _diffusers_version: "0.30.0", scheduler: ["diffusers", "EulerDiscreteScheduler"],
      text_encoder: ["transformers", "CLIPTextModel"], tokenizer: ["transformers", "CLIPTokenizer"], unet: ["diffusers", "UNet2DConditionModel"],
      vae_decoder: ["diffusers", "AutoencoderKL"], vae_encoder: ["diffusers", "AutoencoderKL"], requires_safety_checker: false,
      safety_checker: [null, null], feature_extractor: [null, null],
    });
    expect(json(dir, "scheduler/scheduler_config.json")).toEqual({
      _class_name: "EulerDiscreteScheduler", _diffusers_version: "0.30.0", beta_start: 0.00085, beta_end: 0.012, beta_schedule: "scaled_linear",
      num_train_timesteps: 1000, prediction_type: "epsilon", timestep_spacing: "trailing", steps_offset: 1, interpolation_type: "linear",
      use_karras_sigmas: false, set_alpha_to_one: false, skip_prk_steps: true, clip_sample: false, trained_betas: null,
    });
    expect(json(dir, "text_encoder/config.json")).toMatchObject({
      architectures: ["CLIPTextModel"], model_type: "clip_text_model", hidden_size: 32, num_hidden_layers: 2, num_attention_heads: 2,
      max_position_embeddings: 77, vocab_size: 1024, hidden_act: "quick_gelu", bos_token_id: 1022, eos_token_id: 1023, pad_token_id: 1023,
    });
    expect(json(dir, "unet/config.json")).toMatchObject({
      _class_name: "UNet2DConditionModel", in_channels: 4, out_channels: 4, sample_size: 16, block_out_channels: [16, 32], layers_per_block: 1,
      cross_attention_dim: 32, attention_head_dim: 2, norm_num_groups: 8, down_block_types: ["DownBlock2D", "CrossAttnDownBlock2D"],
      up_block_types: ["CrossAttnUpBlock2D", "UpBlock2D"],
    });
    const vae = json(dir, "vae_decoder/config.json");
    expect(vae).toMatchObject({ _class_name: "AutoencoderKL", in_channels: 3, out_channels: 3, latent_channels: 4, sample_size: 128, scaling_factor: 0.18215 });
    expect(vae.block_out_channels).toHaveLength(4);
    expect(json(dir, "vae_encoder/config.json")).toEqual(vae);
  });

  test("a variant writes tokenizer.json and names the ancestral scheduler", async () => {
    const spec = imageVariant(tiny, { scheduler: "EulerAncestralDiscreteScheduler", tokenizerJson: true });
    const { dir, files } = await buildImageModel({ spec, outDir: join(root, "v") });
    expect(files).toContain("tokenizer/tokenizer.json");
    expect(json(dir, "model_index.json").scheduler).toEqual(["diffusers", "EulerAncestralDiscreteScheduler"]);
    expect(json(dir, "scheduler/scheduler_config.json")._class_name).toBe("EulerAncestralDiscreteScheduler");
    expect(json(dir, "tokenizer/tokenizer.json").model).toMatchObject({ type: "BPE", end_of_word_suffix: "</w>", continuing_subword_prefix: "", unk_token: "<|endoftext|>" });
    // Weights are seeded per tensor name: the variant's graphs are the preset's.
    for (const g of GRAPHS) expect(sha(join(dir, g, "model.onnx_data"))).toBe(sha(join(root, "a", g, "model.onnx_data")));
  });

  test("installModel builds an image spec atomically, skips an identical build, and refuses other dtypes", async () => {
    const models = join(root, "models");
    const first = await installModel(models, { spec: tiny, dtypes: ["fp32"] });
    expect(first).toEqual({ dir: join(models, tiny.id), built: true });
    expect(await installModel(models, { spec: tiny, dtypes: ["fp32"] })).toEqual({ dir: first.dir, built: false });
    expect((await installModel(models, { spec: tiny, dtypes: ["fp32"], force: true })).built).toBe(true);
    await expect(installModel(models, { spec: tiny, dtypes: ["q4"] })).rejects.toThrow("built in fp32 only");
    await expect(buildImageModel({ spec: tiny, outDir: first.dir })).rejects.toThrow("is not empty");
  });
});
