// Model specs: the shape of a decoder (and its optional encoders) kiln can build, the presets, and the spec's identity hash.
import { createHash } from "node:crypto";
import { validateMedia, type AudioSpec, type VisionSpec } from "./media-spec.ts";

/** CPU formats (fp32, q4, int8) and the WebGPU device formats (fp16, q4f16: gpu-decoder-graph.ts). */
export type Dtype = "fp32" | "q4" | "int8" | "fp16" | "q4f16";

export const ARCHITECTURES = ["llama", "qwen2", "qwen3", "phi3"] as const;
export type Architecture = (typeof ARCHITECTURES)[number];

export interface ModelSpec {
  id: string;
  displayName: string;
  /** llama (Llama, Mistral, SmolLM2, TinyLlama), qwen2 (biases on q/k/v), qwen3 (RMS norms on each head's q and k), phi3 (llama's graph; its checkpoints store q/k/v and gate/up fused). */
  architecture: Architecture;
  layers: number;
  hidden: number;
  heads: number;
  kvHeads: number;
  headDim: number;
  intermediate: number;
  vocab: number;
  contextLength: number;
  tiedEmbeddings: boolean;
  ropeTheta: number;
  /**
   * Each rotated pair's frequency is divided by its factor (D/2 of them): Llama 3.1's long-context scaling, as
   * llama.cpp's `rope_freqs` tensor holds it. Absent: plain θ^(−2i/D).
   */
  ropeFreqFactors?: number[];
  rmsEps: number;
  seed: number;
  initStd: number;
  /** Std of the token embedding rows (default initStd): larger keeps each token's identity visible beside hundreds of media rows. */
  embedStd?: number;
  /** An image encoder: the folder gets LLaVA's layout (or kiln-omni's with audio too). */
  vision?: VisionSpec;
  /** An audio encoder: the folder gets Ultravox's layout (or kiln-omni's with vision too). */
  audio?: AudioSpec;
}

/** Bumped whenever the builder's output for a given spec changes, so cached and installed builds are redone. */
export const BUILDER_VERSION = 13;

export const DEFAULT_MODEL_ID = "kiln-tiny-v1";
/** The built-in model with both encoders, installed beside the default. */
export const DEFAULT_MEDIA_MODEL_ID = "kiln-tiny-omni-v1";

type Decoder = Omit<ModelSpec, "id" | "displayName" | "vision" | "audio">;

/** The tiny decoder: a few MB, loads in milliseconds; the head is untied so greedy output varies. */
const TINY_DECODER: Decoder = {
  architecture: "llama",
  layers: 4,
  hidden: 128,
  heads: 4,
  kvHeads: 2,
  headDim: 32,
  intermediate: 384,
  vocab: 2048,
  contextLength: 131072,
  tiedEmbeddings: false,
  ropeTheta: 10000,
  rmsEps: 1e-6,
  seed: 1,
  initStd: 0.05,
};

/**
 * The benchmark-size media models' decoder (about 55M parameters). With 0.05 embeddings, 576 image rows swamp
 * attention and greedy output repeats one token; 0.5 keeps it varying.
 */
const SMALL_DECODER: Decoder = { ...TINY_DECODER, layers: 8, hidden: 512, heads: 8, kvHeads: 2, headDim: 64, intermediate: 1408, vocab: 32000, embedStd: 0.5 };

/** 56×56 pixels in 14-pixel patches: 16 image tokens. */
const TINY_VISION: VisionSpec = { imageSize: 56, patchSize: 14, hidden: 64, layers: 2, heads: 4, intermediate: 128, layerNormEps: 1e-5 };
const TINY_AUDIO: AudioSpec = { nMels: 80, hidden: 64, layers: 2, heads: 4, intermediate: 128, stackFactor: 8, layerNormEps: 1e-5 };

export const PRESETS: Record<string, ModelSpec> = {
  // The built-in default.
  tiny: { id: DEFAULT_MODEL_ID, displayName: "Kiln Tiny v1", ...TINY_DECODER },
  // The shape of Qwen2-0.5B with random weights, for realistic load and throughput figures.
  "qwen2-0.5b": {
    id: "kiln-qwen2-0.5b-v1",
    displayName: "Kiln Qwen2 0.5B shape v1 (random weights)",
    architecture: "qwen2",
    layers: 24,
    hidden: 896,
    heads: 14,
    kvHeads: 2,
    headDim: 64,
    intermediate: 4864,
    vocab: 151936,
    contextLength: 32768,
    tiedEmbeddings: true,
    ropeTheta: 1000000,
    rmsEps: 1e-6,
    seed: 1,
    initStd: 0.02,
  },
  "tiny-vision": { id: "kiln-tiny-vision-v1", displayName: "Kiln Tiny Vision v1", ...TINY_DECODER, vision: TINY_VISION },
  "tiny-audio": { id: "kiln-tiny-audio-v1", displayName: "Kiln Tiny Audio v1", ...TINY_DECODER, audio: TINY_AUDIO },
  // Built in beside the default, so media runs end to end on a fresh clone.
  "tiny-omni": { id: DEFAULT_MEDIA_MODEL_ID, displayName: "Kiln Tiny Omni v1", ...TINY_DECODER, vision: TINY_VISION, audio: TINY_AUDIO },
  // Benchmark size: 336×336 in 14-pixel patches (576 image tokens), as LLaVA-1.5's CLIP ViT-L/14-336.
  "vision-small": {
    id: "kiln-vision-small-v1",
    displayName: "Kiln Vision Small v1 (random weights)",
    ...SMALL_DECODER,
    vision: { imageSize: 336, patchSize: 14, hidden: 384, layers: 6, heads: 6, intermediate: 1536, layerNormEps: 1e-5 },
  },
  // 128 mel bins, as Whisper large-v3.
  "audio-small": {
    id: "kiln-audio-small-v1",
    displayName: "Kiln Audio Small v1 (random weights)",
    ...SMALL_DECODER,
    audio: { nMels: 128, hidden: 384, layers: 4, heads: 6, intermediate: 1536, stackFactor: 8, layerNormEps: 1e-5 },
  },
};

/**
 * The same spec without its audio encoder (a LLaVA folder, id `<id>-no-audio`). Weights are seeded per tensor name,
 * so the decoder and the vision encoder keep exactly the weights they have in `spec`.
 */
export function withoutAudio(spec: ModelSpec): ModelSpec {
  const { audio: _, ...rest } = spec;
  return { ...rest, id: `${spec.id}-no-audio`, displayName: `${spec.displayName} (no audio)` };
}

/** The same spec without its vision encoder (an Ultravox folder, id `<id>-no-vision`), other weights unchanged. */
export function withoutVision(spec: ModelSpec): ModelSpec {
  const { vision: _, ...rest } = spec;
  return { ...rest, id: `${spec.id}-no-vision`, displayName: `${spec.displayName} (no vision)` };
}

/** Throws with a reason if the spec cannot be built (every later step relies on these invariants). */
export function validateSpec(s: ModelSpec): void {
  const ints: (keyof ModelSpec)[] = ["layers", "hidden", "heads", "kvHeads", "headDim", "intermediate", "vocab", "contextLength"];
  for (const k of ints) {
    const v = s[k];
    if (typeof v !== "number" || !Number.isInteger(v) || v < 1) throw new Error(`spec.${k} must be a positive integer`);
  }
  if (!/^[a-z0-9]+(?:[.-][a-z0-9]+)*$/.test(s.id)) throw new Error(`spec.id "${s.id}" must be lowercase and hyphenated`);
  if (s.heads % s.kvHeads !== 0) throw new Error("spec.heads must be a multiple of spec.kvHeads");
  if (s.headDim % 2 !== 0) throw new Error("spec.headDim must be even (rotary embedding halves)");
  if (s.vocab < 512) throw new Error("spec.vocab must be at least 512 (256 bytes + special tokens + merges)");
  if (!Number.isInteger(s.seed) || s.seed < 0 || s.seed > 0xffffffff) throw new Error("spec.seed must be an integer in [0, 2^32)");
  if (!(s.initStd > 0) || !(s.rmsEps > 0) || !(s.ropeTheta > 1)) throw new Error("spec.initStd, rmsEps and ropeTheta must be positive");
  if (!(ARCHITECTURES as readonly string[]).includes(s.architecture)) throw new Error(`spec.architecture "${s.architecture}" is not one of ${ARCHITECTURES.join(", ")}`);
  if (s.ropeFreqFactors !== undefined && (s.ropeFreqFactors.length !== s.headDim / 2 || s.ropeFreqFactors.some((f) => !(f > 0)))) {
    throw new Error(`spec.ropeFreqFactors must hold ${s.headDim / 2} positive factors (one per rotated pair)`);
  }
  if (s.embedStd !== undefined && !(s.embedStd > 0)) throw new Error("spec.embedStd must be positive");
  validateMedia(s);
}

/** JSON with sorted keys, so the hash does not depend on property order. */
export function canonicalJson(v: unknown): string {
  if (v === null || typeof v !== "object") return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(",")}]`;
  const o = v as Record<string, unknown>;
  return `{${Object.keys(o).sort().map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`).join(",")}}`;
}

/** sha256 of the spec, the dtypes (in order), the default dtype and the builder version: equal hashes mean identical builds. */
export function specHash(spec: ModelSpec, dtypes: readonly Dtype[], defaultDtype: Dtype = dtypes[0]!): string {
  const body = canonicalJson({ spec, dtypes, defaultDtype, builder: BUILDER_VERSION });
  return createHash("sha256").update(body).digest("hex");
}
