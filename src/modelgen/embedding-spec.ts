// The shape of a sentence-embedding model kiln can build (a BERT-style encoder with pooling and normalization), its
// preset, validation and identity hash.
import { createHash } from "node:crypto";
import { canonicalJson } from "./spec.ts";

/** How token rows become one vector: sentence-transformers' pooling modes kiln runs. */
export type Pooling = "mean" | "cls" | "lasttoken";

export interface EmbeddingModelSpec {
  /** The discriminant against text and image specs (config.json's model_type). */
  architecture: "bert";
  id: string;
  displayName: string;
  seed: number;
  vocab: number;
  hidden: number;
  layers: number;
  heads: number;
  intermediate: number;
  /** Learned positions: the longest input (max_position_embeddings). */
  maxPositions: number;
  layerNormEps: number;
  pooling: Pooling;
  normalize: boolean;
  /** Sizes the vector may be truncated to (Matryoshka-style); empty: only the full size. */
  matryoshka: number[];
  /** Std of the embedding tables and linear weights. */
  initStd: number;
}

/** Bumped whenever the embedding builder's output for a given spec changes. */
export const EMBEDDING_BUILDER_VERSION = 1;

export const TINY_EMBED_MODEL_ID = "kiln-embed-tiny-v1";

export const EMBEDDING_PRESETS: Readonly<Record<string, EmbeddingModelSpec>> = Object.freeze({
  "tiny-embed": {
    architecture: "bert",
    id: TINY_EMBED_MODEL_ID,
    displayName: "Kiln Embed Tiny v1",
    seed: 0x0e3bed,
    vocab: 2048,
    hidden: 64,
    layers: 2,
    heads: 4,
    intermediate: 256,
    maxPositions: 512,
    layerNormEps: 1e-12,
    pooling: "mean",
    normalize: true,
    matryoshka: [16, 32, 64],
    initStd: 0.08,
  },
  // all-MiniLM-L6-v2's shape (a smaller vocabulary): what `npm run bench -- --embeddings` serves.
  "embed-small": {
    architecture: "bert",
    id: "kiln-embed-small-v1",
    displayName: "Kiln Embed Small v1",
    seed: 0x0e3b5a,
    vocab: 8192,
    hidden: 384,
    layers: 6,
    heads: 12,
    intermediate: 1536,
    maxPositions: 512,
    layerNormEps: 1e-12,
    pooling: "mean",
    normalize: true,
    matryoshka: [64, 128, 256, 384],
    initStd: 0.05,
  },
});

export function isEmbeddingSpec(s: { architecture: string }): s is EmbeddingModelSpec {
  return s.architecture === "bert";
}

/** Throws with a reason if the spec cannot be built. */
export function validateEmbeddingSpec(s: EmbeddingModelSpec): void {
  if (!/^[a-z0-9]+(?:[.-][a-z0-9]+)*$/.test(s.id)) throw new Error(`spec.id "${s.id}" must be lowercase and hyphenated`);
  for (const k of ["vocab", "hidden", "layers", "heads", "intermediate", "maxPositions"] as const) {
    if (!Number.isInteger(s[k]) || s[k] < 1) throw new Error(`spec.${k} must be a positive integer`);
  }
  if (s.hidden % s.heads !== 0) throw new Error("spec.hidden must be a multiple of spec.heads");
  if (s.vocab < 512) throw new Error("spec.vocab must be at least 512 (256 bytes + special tokens + merges)");
  if (!["mean", "cls", "lasttoken"].includes(s.pooling)) throw new Error("spec.pooling must be mean, cls or lasttoken");
  if (s.matryoshka.some((d) => !Number.isInteger(d) || d < 1 || d > s.hidden)) throw new Error("spec.matryoshka sizes must be integers in 1…hidden");
}

/** sha256 of the spec and the builder version: equal hashes mean identical builds. */
export function embeddingSpecHash(spec: EmbeddingModelSpec): string {
  return createHash("sha256").update(canonicalJson({ spec, builder: EMBEDDING_BUILDER_VERSION })).digest("hex");
}
