// Model specs: the shape of a decoder kiln can build, the built-in presets, and the spec's identity hash.
import { createHash } from "node:crypto";

export type Dtype = "fp32" | "q4" | "int8";

export interface ModelSpec {
  id: string;
  displayName: string;
  architecture: "llama" | "qwen2";
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
  rmsEps: number;
  seed: number;
  initStd: number;
}

/** Bumped whenever the builder's output for a given spec changes, so cached and installed builds are redone. */
export const BUILDER_VERSION = 9;

export const DEFAULT_MODEL_ID = "kiln-tiny-v1";

export const PRESETS: Record<string, ModelSpec> = {
  // The built-in default: a few MB, loads in milliseconds; the head is untied so greedy output varies.
  tiny: {
    id: DEFAULT_MODEL_ID,
    displayName: "Kiln Tiny v1",
    architecture: "llama",
    layers: 4,
    hidden: 128,
    heads: 4,
    kvHeads: 2,
    headDim: 32,
    intermediate: 384,
    vocab: 2048,
    contextLength: 4096,
    tiedEmbeddings: false,
    ropeTheta: 10000,
    rmsEps: 1e-6,
    seed: 1,
    initStd: 0.05,
  },
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
};

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
