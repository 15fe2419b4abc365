// llama.cpp's quantization mixes as kiln writes them: each format's file type and the type of every tensor, as
// llama_tensor_get_type (src/llama-quant.cpp) picks it, with its fallback for rows K-quants cannot take.
import { describe, expect, test } from "bun:test";
import { PRESETS, type ModelSpec } from "../../../src/modelgen/index.ts";
import { GGML_TYPE, ggmlTypeName } from "../../../src/modelgen/gguf-blocks.ts";
import { GGUF_FORMATS, ggufMetadata, ggufTensorPlan, type GgufFormat } from "../../../src/modelgen/gguf-model.ts";
import { TINY_QWEN2 } from "./tiny-specs.ts";

/** Rows of 256 everywhere (hidden, heads × headDim, intermediate), 8 layers: K-quants apply and the mixes show. */
const K_SPEC: ModelSpec = { ...PRESETS.tiny!, id: "kiln-mix-test", layers: 8, hidden: 256, heads: 4, kvHeads: 2, headDim: 64, intermediate: 512 };

/** "role: type" for every tensor of `spec` in `format`, by layer where the mix varies by layer. */
function typesOf(spec: ModelSpec, format: GgufFormat): Map<string, string> {
  return new Map(ggufTensorPlan(spec, format).map((t) => [t.name, ggmlTypeName(t.type)]));
}

/** The layers of `role` that got `type`. */
function layersWith(types: Map<string, string>, role: string, type: string): number[] {
  return [...types].filter(([n, t]) => n.endsWith(`${role}.weight`) && t === type).map(([n]) => Number(/blk\.(\d+)\./.exec(n)![1]));
}

describe("mixes on rows of 256", () => {
  test("Q4_K_M: output Q6_K; attn_v and ffn_down Q6_K in the first and last eighth and every third layer between; the rest Q4_K", () => {
    const t = typesOf(K_SPEC, "q4_k_m");
    expect(t.get("output.weight")).toBe("Q6_K");
    expect(t.get("token_embd.weight")).toBe("Q4_K");
    expect(layersWith(t, "attn_v", "Q6_K")).toEqual([0, 3, 6, 7]);
    expect(layersWith(t, "ffn_down", "Q6_K")).toEqual([0, 3, 6, 7]);
    expect(layersWith(t, "attn_v", "Q4_K")).toEqual([1, 2, 4, 5]);
    for (const role of ["attn_q", "attn_k", "attn_output", "ffn_gate", "ffn_up"]) expect(layersWith(t, role, "Q4_K")).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(t.get("blk.0.attn_norm.weight")).toBe("F32");
    expect(t.get("output_norm.weight")).toBe("F32");
  });

  test("Q5_K_M: the same layers at Q6_K, the rest Q5_K", () => {
    const t = typesOf(K_SPEC, "q5_k_m");
    expect([t.get("output.weight"), t.get("token_embd.weight"), t.get("blk.1.attn_q.weight")]).toEqual(["Q6_K", "Q5_K", "Q5_K"]);
    expect(layersWith(t, "attn_v", "Q6_K")).toEqual([0, 3, 6, 7]);
    expect(layersWith(t, "ffn_down", "Q6_K")).toEqual([0, 3, 6, 7]);
  });

  test("Q4_K_S, Q3_K_M, Q3_K_L, Q2_K, Q5_K_S, Q6_K", () => {
    const s = typesOf(K_SPEC, "q4_k_s");
    expect(layersWith(s, "attn_v", "Q5_K")).toEqual([0, 1, 2, 3]);
    expect(layersWith(s, "ffn_down", "Q5_K")).toEqual([0]);
    const m3 = typesOf(K_SPEC, "q3_k_m");
    expect(layersWith(m3, "attn_v", "Q5_K")).toEqual([0, 1]);
    expect(layersWith(m3, "attn_v", "Q4_K")).toEqual([2, 3, 4, 5, 6, 7]);
    expect(layersWith(m3, "ffn_down", "Q4_K").length).toBe(8); // i < 8/16 is no layer
    expect(layersWith(m3, "attn_output", "Q4_K").length).toBe(8);
    expect([m3.get("blk.0.attn_q.weight"), m3.get("output.weight")]).toEqual(["Q3_K", "Q6_K"]);
    const l3 = typesOf(K_SPEC, "q3_k_l");
    for (const role of ["attn_v", "ffn_down", "attn_output"]) expect(layersWith(l3, role, "Q5_K").length).toBe(8);
    const q2 = typesOf(K_SPEC, "q2_k");
    // n_gqa = 4/2 = 2 < 4: attn_v Q3_K (Q4_K from 4 query heads per KV head).
    expect([q2.get("blk.0.attn_v.weight"), q2.get("blk.0.ffn_down.weight"), q2.get("blk.0.attn_output.weight"), q2.get("blk.0.attn_q.weight")]).toEqual(["Q3_K", "Q3_K", "Q3_K", "Q2_K"]);
    expect(typesOf({ ...K_SPEC, kvHeads: 1 }, "q2_k").get("blk.0.attn_v.weight")).toBe("Q4_K");
    expect([...new Set(typesOf(K_SPEC, "q5_k_s").values())].sort()).toEqual(["F32", "Q5_K", "Q6_K"]);
    expect([...new Set(typesOf(K_SPEC, "q6_k").values())].sort()).toEqual(["F32", "Q6_K"]);
  });

  test("legacy formats: every matrix in the format's type but the head at Q6_K (Q8_0 keeps its own); F16/BF16/F32 everywhere", () => {
    for (const [f, type] of [["q4_0", "Q4_0"], ["q4_1", "Q4_1"], ["q5_0", "Q5_0"], ["q5_1", "Q5_1"], ["q8_0", "Q8_0"], ["f16", "F16"], ["bf16", "BF16"], ["f32", "F32"]] as const) {
      const t = typesOf(K_SPEC, f);
      expect(t.get("output.weight")).toBe(f === "q8_0" || f.startsWith("f") || f === "bf16" ? type : "Q6_K");
      expect([t.get("token_embd.weight"), t.get("blk.3.attn_v.weight"), t.get("blk.3.ffn_down.weight")]).toEqual([type, type, type]);
    }
  });

  test("tied embeddings: token_embd is the head, and takes the head's type", () => {
    const t = typesOf({ ...K_SPEC, tiedEmbeddings: true }, "q4_k_m");
    expect(t.has("output.weight")).toBe(false);
    expect(t.get("token_embd.weight")).toBe("Q6_K");
  });
});

test("rows K-quants cannot take fall back as llama.cpp's quantizer does: Q4_K→Q5_0, Q5_K→Q5_1, Q6_K→Q8_0, Q2_K/Q3_K→Q4_0", () => {
  // The tiny preset: hidden 128, intermediate 384, so no row is a multiple of 256.
  const tiny = PRESETS.tiny!;
  const m4 = typesOf(tiny, "q4_k_m");
  expect([m4.get("blk.0.attn_q.weight"), m4.get("blk.2.attn_v.weight"), m4.get("blk.3.ffn_down.weight"), m4.get("output.weight")]).toEqual(["Q5_0", "Q8_0", "Q8_0", "Q8_0"]);
  expect(typesOf(tiny, "q5_k_m").get("blk.1.attn_q.weight")).toBe("Q5_1");
  expect(typesOf(tiny, "q2_k").get("blk.1.attn_q.weight")).toBe("Q4_0");
  expect(typesOf(tiny, "q3_k_m").get("blk.1.attn_q.weight")).toBe("Q4_0");
  // The head of a Q4_0 file wants Q6_K, and falls back to Q8_0 on rows of 128.
  expect(typesOf(tiny, "q4_0").get("output.weight")).toBe("Q8_0");
  expect(typesOf(TINY_QWEN2, "q4_k_m").get("token_embd.weight")).toBe("Q8_0");
  // Rows of 96 + 32 = 128 are not whole 32-blocks for nothing: a row of 48 has no quantized type at all.
  expect(() => ggufTensorPlan({ ...tiny, hidden: 48, heads: 2, kvHeads: 1, headDim: 24 }, "q8_0")).toThrow("rows of 48 are not whole 32-element blocks");
});

test("general.file_type is llama.cpp's llama_ftype of each format", () => {
  const ftype = (f: GgufFormat) => ggufMetadata(PRESETS.tiny!, f, []).find((kv) => kv.key === "general.file_type")!.value;
  expect(Object.fromEntries(GGUF_FORMATS.map((f) => [f, ftype(f)]))).toEqual({
    f32: 0, f16: 1, q4_0: 2, q4_1: 3, q8_0: 7, q5_0: 8, q5_1: 9, q2_k: 10, q3_k_s: 11, q3_k_m: 12, q3_k_l: 13,
    q4_k_s: 14, q4_k_m: 15, q5_k_s: 16, q5_k_m: 17, q6_k: 18, bf16: 32,
  });
});

test("tokenizerKv replaces kiln's tokenizer keys, and only those", () => {
  const kv = ggufMetadata(PRESETS.tiny!, "q8_0", [{ key: "tokenizer.ggml.model", type: "string", value: "llama" }]);
  expect(kv.filter((k) => k.key.startsWith("tokenizer."))).toEqual([{ key: "tokenizer.ggml.model", type: "string", value: "llama" }]);
  expect(kv.find((k) => k.key === "llama.block_count")?.value).toBe(4);
  expect(() => ggufMetadata(PRESETS.tiny!, "q8_0", [{ key: "general.name", type: "string", value: "x" }])).toThrow("only tokenizer.* keys");
  expect(GGML_TYPE.Q6_K).toBe(14);
});
