// transformers.js loads the tiny vision (LLaVA) and audio (Ultravox) folders offline and its greedy tokens match the contract's merge run directly.
import { beforeAll, describe, expect, test } from "bun:test";
import { basename, dirname } from "node:path";
import * as ort from "onnxruntime-node";
import { AutoModelForAudioTextToText, AutoModelForImageTextToText, AutoProcessor, env, RawImage, type Tensor } from "@huggingface/transformers";
import { PRESETS } from "../../../src/modelgen/index.ts";
import { maxAbsDiff } from "./ort-driver.ts";
import { builtModel, greedyWithFeatures, openMediaDriver, session } from "./media-models.ts";

const NEW_TOKENS = 8;

/** transformers.js's Processor type declares no call signature for the multimodal processors; this is what they take. */
type Processor = {
  tokenizer: { apply_chat_template(m: unknown[], o: Record<string, unknown>): string };
  (...args: unknown[]): Promise<Record<string, Tensor> & { audio_token_len?: number[] }>;
};

async function load(dir: string, auto: typeof AutoModelForImageTextToText | typeof AutoModelForAudioTextToText) {
  env.allowRemoteModels = false;
  env.localModelPath = dirname(dir);
  const processor = (await AutoProcessor.from_pretrained(basename(dir), { local_files_only: true })) as unknown as Processor;
  const model = await auto.from_pretrained(basename(dir), { local_files_only: true, dtype: "fp32" });
  const eos = JSON.parse(await Bun.file(`${dir}/generation_config.json`).text()).eos_token_id as number[];
  return { processor, model, eos };
}

const ids = (t: Tensor) => Array.from(t.data as BigInt64Array, Number);
const prompt = (p: Processor, part: string, text: string) =>
  p.tokenizer.apply_chat_template([{ role: "user", content: [{ type: part }, { type: "text", text }] }], { tokenize: false, add_generation_prompt: true });

async function generate(model: { generate(o: Record<string, unknown>): Promise<unknown> }, inputs: Record<string, unknown>, promptLen: number) {
  const out = (await model.generate({ ...inputs, max_new_tokens: NEW_TOKENS, do_sample: false })) as Tensor;
  return (out.tolist() as bigint[][])[0]!.slice(promptLen).map(Number);
}

describe("tiny-vision through transformers.js (AutoProcessor + AutoModelForImageTextToText)", () => {
  let dir: string;
  let tjs: Awaited<ReturnType<typeof load>>;
  beforeAll(async () => {
    dir = await builtModel(PRESETS["tiny-vision"]!);
    tjs = await load(dir, AutoModelForImageTextToText);
  });
  const image = (seed: number) => new RawImage(new Uint8ClampedArray(64 * 48 * 3).map((_, i) => (i * seed) % 256), 64, 48, 3);

  test("one <image> expands to 16 placeholders, and greedy tokens equal the direct merge over vision_encoder's features", async () => {
    const { processor, model, eos } = tjs;
    const text = prompt(processor, "image", "What is in the picture?");
    expect(text).toBe("<|im_start|>user\n<image>What is in the picture?<|im_end|>\n<|im_start|>assistant\n");
    const inputs = await processor(image(37), text);
    expect(inputs.pixel_values!.dims).toEqual([1, 3, 56, 56]);
    const promptIds = ids(inputs.input_ids!);
    const imageId = JSON.parse(await Bun.file(`${dir}/config.json`).text()).image_token_index;
    expect(promptIds.filter((t) => t === imageId).length).toBe(16);

    const fromTjs = await generate(model, inputs, promptIds.length);
    expect(fromTjs.length).toBe(NEW_TOKENS); // no early end: all 8 steps are compared

    const vision = await session(dir, "vision_encoder");
    const px = inputs.pixel_values!;
    const features = (await vision.run({ pixel_values: new ort.Tensor("float32", px.data as Float32Array, px.dims) })).image_features!;
    expect(features.dims).toEqual([1, 16, 128]);
    const d = await openMediaDriver(dir);
    const direct = await greedyWithFeatures(d, promptIds, features.data as Float32Array, imageId, NEW_TOKENS, eos);
    expect(direct.tokens).toEqual(fromTjs);

    // The picture reaches the logits: another image changes the first step's distribution.
    const other = await processor(image(11), text);
    const otherFeatures = (await vision.run({ pixel_values: new ort.Tensor("float32", other.pixel_values!.data as Float32Array, px.dims) })).image_features!;
    const second = await greedyWithFeatures(d, promptIds, otherFeatures.data as Float32Array, imageId, 1, eos);
    expect(maxAbsDiff(second.first, direct.first)).toBeGreaterThan(1e-2);
  });
});

describe("tiny-audio through transformers.js (AutoProcessor + AutoModelForAudioTextToText)", () => {
  let dir: string;
  let tjs: Awaited<ReturnType<typeof load>>;
  beforeAll(async () => {
    dir = await builtModel(PRESETS["tiny-audio"]!);
    tjs = await load(dir, AutoModelForAudioTextToText);
  });
  const clip = (samples: number, freq: number) => new Float32Array(samples).map((_, i) => 0.3 * Math.sin(i * freq));

  test("a 1 s clip becomes 8 placeholders, and greedy tokens equal the direct merge over audio_encoder's features", async () => {
    const { processor, model, eos } = tjs;
    const text = prompt(processor, "audio", "What do you hear?");
    expect(text).toBe("<|im_start|>user\n<|audio|>What do you hear?<|im_end|>\n<|im_start|>assistant\n");
    const inputs = await processor(text, clip(16000, 0.05));
    expect(inputs.audio_values!.dims).toEqual([1, 80, 100]);
    expect(inputs.audio_token_len).toEqual([8]);
    const promptIds = ids(inputs.input_ids!);
    const audioId = JSON.parse(await Bun.file(`${dir}/config.json`).text()).audio_token_index;
    expect(promptIds.filter((t) => t === audioId).length).toBe(8);

    const fromTjs = await generate(model, inputs, promptIds.length);
    expect(fromTjs.length).toBe(NEW_TOKENS);

    const audio = await session(dir, "audio_encoder");
    const mel = inputs.audio_values!;
    const features = (await audio.run({ audio_values: new ort.Tensor("float32", mel.data as Float32Array, mel.dims) })).audio_features!;
    expect(features.dims).toEqual([1, 8, 128]);
    const d = await openMediaDriver(dir);
    const direct = await greedyWithFeatures(d, promptIds, features.data as Float32Array, audioId, NEW_TOKENS, eos);
    expect(direct.tokens).toEqual(fromTjs);

    const other = await processor(text, clip(16000, 0.31));
    const otherFeatures = (await audio.run({ audio_values: new ort.Tensor("float32", other.audio_values!.data as Float32Array, mel.dims) })).audio_features!;
    const second = await greedyWithFeatures(d, promptIds, otherFeatures.data as Float32Array, audioId, 1, eos);
    expect(maxAbsDiff(second.first, direct.first)).toBeGreaterThan(1e-2);
  });
});
