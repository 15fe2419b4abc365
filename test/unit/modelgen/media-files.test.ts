// The JSON of media folders: kiln.json's media block, config.json as transformers.js normalizes it, processor configs, tokens and template.
import { beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Template } from "@huggingface/jinja";
import { AutoConfig, AutoTokenizer, env } from "@huggingface/transformers";
import { audioFeatureCount, PRESETS, validateSpec, withoutAudio, type ModelSpec } from "../../../src/modelgen/index.ts";
import { buildTokenizer, specialId } from "../../../src/modelgen/tokenizer.ts";
import { generateWeight, weightPlan } from "../../../src/modelgen/weights.ts";
import { builtModel } from "./media-models.ts";

const json = (dir: string, f: string) => JSON.parse(readFileSync(join(dir, f), "utf8"));
const dirs: Record<string, string> = {};
beforeAll(async () => {
  for (const p of ["tiny-vision", "tiny-audio", "tiny-omni"]) dirs[p] = await builtModel(PRESETS[p]!);
  env.allowRemoteModels = false;
});

const image = { token: "<image>", token_id: 2046, size: 56, patch_size: 14, tokens: 16 };
const audio = { token: "<|audio|>", token_id: 2047, sample_rate: 16000, hop_length: 160, n_mels: 80, encoder_ds_factor: 320, stack_factor: 8, chunk_seconds: 30 };

describe("kiln.json", () => {
  test.each([
    ["tiny-vision", "llava", { image }, true, false],
    ["tiny-audio", "ultravox", { audio }, false, true],
    ["tiny-omni", "kiln-omni", { image, audio }, true, true],
  ] as const)("%s: capabilities and the media block", (preset, layout, blocks, vision, hears) => {
    const m = json(dirs[preset]!, "kiln.json");
    expect(m.capabilities).toEqual({ chat: true, tools: true, reasoning: true, vision, audio: hears, image_generation: false });
    expect(m.media).toEqual({ layout, ...blocks });
    expect(m.id).toBe(PRESETS[preset]!.id);
  });
});

describe("config.json", () => {
  test("transformers.js normalizes every layout's text_config into the decoder's KV-cache shape", async () => {
    for (const [preset, type] of [["tiny-vision", "llava"], ["tiny-audio", "ultravox"]] as const) {
      const c = (await AutoConfig.from_pretrained(dirs[preset]!, { local_files_only: true })) as unknown as Record<string, unknown> & { normalized_config: Record<string, unknown> };
      expect(c.model_type).toBe(type);
      expect(c.normalized_config).toMatchObject({ num_layers: 4, num_heads: 2, num_attention_heads: 4, dim_kv: 32, hidden_size: 128 });
    }
  });

  test("llava: image_token_index and the vision config; ultravox: audio_token_index, stack_factor and no ignore_index", () => {
    const v = json(dirs["tiny-vision"]!, "config.json");
    expect(v).toMatchObject({ architectures: ["LlavaForConditionalGeneration"], image_token_index: 2046, image_seq_length: 16, vision_feature_select_strategy: "full" });
    expect(v.vision_config).toMatchObject({ image_size: 56, patch_size: 14, hidden_size: 64, num_hidden_layers: 2, num_attention_heads: 4 });
    expect(v.text_config).toMatchObject({ model_type: "llama", num_hidden_layers: 4, num_key_value_heads: 2, head_dim: 32, vocab_size: 2048 });
    expect(v["transformers.js_config"]).toEqual({ dtype: "fp32" });
    const a = json(dirs["tiny-audio"]!, "config.json");
    expect(a).toMatchObject({ architectures: ["UltravoxModel"], model_type: "ultravox", audio_token_index: 2047, stack_factor: 8 });
    expect("ignore_index" in a).toBe(false);
    expect("audio_token_index" in v || "image_token_index" in a).toBe(false);
    const o = json(dirs["tiny-omni"]!, "config.json");
    expect(o).toMatchObject({ model_type: "kiln_omni", image_token_index: 2046, audio_token_index: 2047, stack_factor: 8 });
    expect(Object.keys(o)).toEqual(expect.arrayContaining(["text_config", "vision_config", "audio_config"]));
  });

  test("processor configs: CLIP image processing, Whisper features, and the processors' placeholder settings", () => {
    expect(json(dirs["tiny-vision"]!, "preprocessor_config.json")).toMatchObject({
      image_processor_type: "CLIPImageProcessor", processor_class: "LlavaProcessor", size: { shortest_edge: 56 }, crop_size: { height: 56, width: 56 }, do_center_crop: true,
    });
    expect(json(dirs["tiny-vision"]!, "processor_config.json")).toEqual({
      processor_class: "LlavaProcessor", image_token: "<image>", patch_size: 14, num_additional_image_tokens: 0, vision_feature_select_strategy: "full",
    });
    expect(json(dirs["tiny-audio"]!, "preprocessor_config.json")).toMatchObject({
      feature_extractor_type: "WhisperFeatureExtractor", processor_class: "UltravoxProcessor", feature_size: 80, sampling_rate: 16000, hop_length: 160, n_fft: 400,
      chunk_length: 30, n_samples: 480000, nb_max_frames: 3000,
    });
    expect(json(dirs["tiny-audio"]!, "processor_config.json")).toEqual({ processor_class: "UltravoxProcessor", audio_placeholder: "<|audio|>", encoder_ds_factor: 320, stack_factor: 8 });
    const omni = dirs["tiny-omni"]!;
    expect(json(omni, "processor_config.json")).toEqual({
      image_token: "<image>", patch_size: 14, num_additional_image_tokens: 0, vision_feature_select_strategy: "full", audio_placeholder: "<|audio|>", encoder_ds_factor: 320, stack_factor: 8,
    });
    expect(json(omni, "preprocessor_config.json").image_processor_type).toBe("CLIPImageProcessor");
    expect(json(omni, "audio_preprocessor_config.json").feature_extractor_type).toBe("WhisperFeatureExtractor");
  });
});

describe("tokens and chat template", () => {
  test("media folders add <image> and <|audio|> as single special ids after the text specials; text tokenizers are unchanged", async () => {
    const tok = await AutoTokenizer.from_pretrained(dirs["tiny-omni"]!, { local_files_only: true });
    expect(tok.encode("<image><|audio|>", { add_special_tokens: false })).toEqual([2046, 2047]);
    expect(tok.decode([2046, 2047], { skip_special_tokens: true })).toBe("");
    expect(specialId(2048, "<|endoftext|>", true)).toBe(2035);
    expect(specialId(2048, "<|endoftext|>")).toBe(2037);
    expect(() => specialId(2048, "<image>")).toThrow("not a special token");
    const text = buildTokenizer(2048, 4096);
    expect(JSON.stringify(text.tokenizerJson)).not.toContain("<image>");
    expect(text.ids).toEqual({ endOfText: 2037, imStart: 2038, imEnd: 2039 });
  });

  test("the media template writes a placeholder per image or audio part, in order; the text template ignores them", () => {
    const messages = [{ role: "user", content: [{ type: "text", text: "A " }, { type: "image" }, { type: "audio" }, { type: "image" }, { type: "text", text: " B" }] }];
    const media = new Template(json(dirs["tiny-omni"]!, "tokenizer_config.json").chat_template);
    expect(media.render({ messages, add_generation_prompt: false })).toBe("<|im_start|>user\nA <image><|audio|><image> B<|im_end|>\n");
    const text = new Template(buildTokenizer(2048, 4096).tokenizerConfig.chat_template as string);
    expect(text.render({ messages, add_generation_prompt: false })).toBe("<|im_start|>user\nA  B<|im_end|>\n");
  });
});

describe("media specs", () => {
  test("embedStd sets the embedding rows' std only; without it the embedding keeps initStd", () => {
    const tiny = PRESETS.tiny!;
    const std = (spec: ModelSpec, kind: string) => {
      const e = weightPlan(spec).find((p) => p.kind === kind)!;
      const data = [...generateWeight(spec, e)][0]!.data;
      let sq = 0;
      for (const v of data) sq += v * v;
      return Math.sqrt(sq / data.length);
    };
    expect(std({ ...tiny, embedStd: 0.5 }, "embed")).toBeCloseTo(0.5, 2);
    expect(std({ ...tiny, embedStd: 0.5 }, "head")).toBeCloseTo(0.05, 3);
    expect(std(tiny, "embed")).toBeCloseTo(0.05, 3);
    expect(PRESETS["vision-small"]!.embedStd).toBe(0.5);
  });

  test("audioFeatureCount over log-mel frames equals UltravoxProcessor's count over samples (every length up to 30 s)", () => {
    for (let samples = 400; samples <= 480000; samples += 37) {
      const frames = Math.min(Math.floor(samples / 160), 3000);
      expect(audioFeatureCount(frames, 8)).toBe(1 + Math.ceil(Math.round(samples / 320 + 1e-4) / 8));
    }
  });

  test("validation rejects impossible encoders; every preset is valid; withoutAudio keeps the rest of the spec", () => {
    for (const s of Object.values(PRESETS)) expect(() => validateSpec(s)).not.toThrow();
    const o = PRESETS["tiny-omni"]!;
    const bad = (patch: Partial<ModelSpec>) => () => validateSpec({ ...o, ...patch });
    expect(bad({ vision: { ...o.vision!, imageSize: 50 } })).toThrow("multiple of spec.vision.patchSize");
    expect(bad({ vision: { ...o.vision!, heads: 3 } })).toThrow("multiple of spec.vision.heads");
    expect(bad({ audio: { ...o.audio!, stackFactor: 0 } })).toThrow("spec.audio.stackFactor");
    expect(bad({ audio: { ...o.audio!, hidden: 2, heads: 1 } })).toThrow("even and at least 4");
    const { audio: _, id: __, displayName: ___, ...rest } = o;
    const v = withoutAudio(o);
    expect("audio" in v).toBe(false);
    expect(v).toMatchObject(rest);
    expect(bad({ embedStd: 0 })).toThrow("spec.embedStd");
    expect(PRESETS["vision-small"]!.vision).toMatchObject({ imageSize: 336, patchSize: 14 });
    expect(PRESETS["audio-small"]!.audio!.nMels).toBe(128);
  });
});
