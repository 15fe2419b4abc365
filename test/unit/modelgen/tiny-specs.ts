// Small test-only model specs covering the builder paths the tiny preset does not (Qwen2 biases, tied head).
import { PRESETS, type ModelSpec } from "../../../src/modelgen/index.ts";

/** A small Qwen2-style spec: q/k/v biases, tied embeddings, 3 query heads per KV head, odd layer count. */
export const TINY_QWEN2: ModelSpec = {
  ...PRESETS.tiny!, id: "kiln-tiny-qwen2-v1", architecture: "qwen2", layers: 3, heads: 6, kvHeads: 2, headDim: 16,
  hidden: 96, intermediate: 160, vocab: 1024, contextLength: 512, tiedEmbeddings: true, initStd: 0.08, ropeTheta: 1e6,
};

