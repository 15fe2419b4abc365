// Test helper: builds the tiny media presets once per test process, makes test images and clips, and computes the
// greedy tokens of a media prompt by running the folder's sessions directly with full recompute (no cache, no engine).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import * as ort from "onnxruntime-node";
import { WhisperFeatureExtractor } from "@huggingface/transformers";
import { presetModelDir } from "../helpers/tiny-model.ts";
import type { MediaInput } from "../../src/protocol/text.ts";

export type MediaPreset = "tiny-vision" | "tiny-audio" | "tiny-omni";

/** The preset's fp32 folder, from the tests' shared model cache (built on first use). */
export function mediaModelDir(preset: MediaPreset): Promise<string> {
  return presetModelDir(preset);
}

/** The folder's config.json ids and sizes the tests need. */
export function mediaConfig(dir: string): { imageToken: number; audioToken: number; size: number; hidden: number; stack: number } {
  const c = JSON.parse(readFileSync(join(dir, "config.json"), "utf8"));
  return { imageToken: c.image_token_index, audioToken: c.audio_token_index, size: c.vision_config?.image_size, hidden: c.text_config.hidden_size, stack: c.stack_factor };
}

/** A size×size picture whose bytes depend on `seed` (raw RGB, row-major). */
export const testRgb = (size: number, seed: number) => Uint8Array.from({ length: size * size * 3 }, (_, i) => (i * (31 + seed) + seed * 57 + (i >> 6)) % 256);

/** A clip of `samples` at 16 kHz: two tones whose pitch depends on `seed`. */
export const testClip = (samples: number, seed: number) =>
  Float32Array.from({ length: samples }, (_, i) => 0.4 * Math.sin((i * (300 + 40 * seed) * 2 * Math.PI) / 16000) + 0.2 * Math.sin((i * 1234) / 16000));

/** Ultravox's placeholder count for a clip (transformers.js UltravoxProcessor). */
export const audioTokens = (samples: number, stack: number) => 1 + Math.ceil(Math.round(samples / 320) / stack);

/** CLIP's normalisation written out, for a picture already at the model's size (resize and crop are then identities). */
export function clipPixels(rgb: Uint8Array, size: number): Float32Array {
  const mean = [0.48145466, 0.4578275, 0.40821073];
  const std = [0.26862954, 0.26130258, 0.27577711];
  const out = new Float32Array(3 * size * size);
  for (let c = 0; c < 3; c++) for (let p = 0; p < size * size; p++) out[c * size * size + p] = (rgb[p * 3 + c]! / 255 - mean[c]!) / std[c]!;
  return out;
}

const i64 = (v: number[]) => new ort.Tensor("int64", BigInt64Array.from(v.map(BigInt)), [1, v.length]);
const open = (dir: string, stem: string) => ort.InferenceSession.create(join(dir, "onnx", `${stem}.onnx`), { intraOpNumThreads: 1 });

/** The features of each input, computed with the folder's encoder sessions run directly. */
export async function directFeatures(dir: string, media: MediaInput[]): Promise<Float32Array[]> {
  const { size } = mediaConfig(dir);
  const out: Float32Array[] = [];
  for (const m of media) {
    if (m.kind === "image") {
      if (!("rgb" in m.image) || m.image.width !== size || m.image.height !== size) throw new Error("reference images are raw and at the model's size");
      const s = await open(dir, "vision_encoder");
      out.push((await s.run({ pixel_values: new ort.Tensor("float32", clipPixels(m.image.rgb, size), [1, 3, size, size]) })).image_features!.data as Float32Array);
    } else {
      const file = JSON.parse(readFileSync(join(dir, "config.json"), "utf8")).model_type === "kiln_omni" ? "audio_preprocessor_config.json" : "preprocessor_config.json";
      const fe = new WhisperFeatureExtractor(JSON.parse(readFileSync(join(dir, file), "utf8")));
      const { input_features } = await fe(m.samples, { max_length: m.samples.length });
      const s = await open(dir, "audio_encoder");
      out.push((await s.run({ audio_values: new ort.Tensor("float32", input_features.data as Float32Array, input_features.dims) })).audio_features!.data as Float32Array);
    }
  }
  return out;
}

/**
 * Greedy tokens of `ids` with each input's feature rows over its placeholders, every step recomputed from the whole
 * sequence (embed_tokens over all ids, the merge, the decoder from an empty cache). `features` null: no merge.
 */
export async function recomputedGreedy(dir: string, ids: number[], media: MediaInput[], features: Float32Array[] | null, steps: number): Promise<number[]> {
  const text = JSON.parse(readFileSync(join(dir, "config.json"), "utf8")).text_config;
  const [embed, decoder] = await Promise.all([open(dir, "embed_tokens"), open(dir, "decoder_model_merged")]);
  const all = [...ids];
  const tokens: number[] = [];
  for (let step = 0; step < steps; step++) {
    const n = all.length;
    const embeds = (await embed.run({ input_ids: i64(all) })).inputs_embeds!.data as Float32Array;
    media.forEach((m, i) => features && embeds.set(features[i]!, m.at * text.hidden_size));
    const feeds: Record<string, ort.Tensor> = {
      inputs_embeds: new ort.Tensor("float32", embeds, [1, n, text.hidden_size]),
      attention_mask: i64(new Array(n).fill(1)),
      position_ids: i64(Array.from({ length: n }, (_, i) => i)),
      num_logits_to_keep: new ort.Tensor("int64", BigInt64Array.of(1n), []),
    };
    for (let l = 0; l < text.num_hidden_layers; l++) {
      for (const kv of ["key", "value"]) feeds[`past_key_values.${l}.${kv}`] = new ort.Tensor("float32", new Float32Array(0), [1, text.num_key_value_heads, 0, text.head_dim]);
    }
    const logits = (await decoder.run(feeds, ["logits"])).logits!.data as Float32Array;
    let best = 0;
    for (let v = 1; v < text.vocab_size; v++) if (logits[v]! > logits[best]!) best = v;
    tokens.push(best);
    all.push(best);
  }
  return tokens;
}
