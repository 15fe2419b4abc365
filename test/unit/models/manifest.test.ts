import { describe, expect, test } from "bun:test";
import { dtypesFromFiles, infoFromConfig, isValidModelId, parseManifest, parsePricing } from "../../../src/models/manifest.ts";
import { fakeManifest } from "../../helpers/fake-model.ts";

describe("model manifest", () => {
  test("ids are lowercase, hyphenated, versioned", () => {
    for (const id of ["kiln-tiny-v1", "qwen2-0.5b-q4-v1", "llama-3.2-1b"]) expect(isValidModelId(id)).toBe(true);
    for (const id of ["Kiln-Tiny-v1", "tiny", "kiln_tiny_1", "kiln-tiny", "-a-1"]) expect(isValidModelId(id)).toBe(false);
  });

  test("dtypes come from the graph files present", () => {
    expect(dtypesFromFiles(["model.onnx", "model.onnx_data", "model_q4.onnx"])).toEqual(["fp32", "q4"]);
  });

  test("a full manifest parses", () => {
    const info = parseManifest(fakeManifest("kiln-tiny-v1"), ["fp32"]);
    expect(info).toMatchObject({
      id: "kiln-tiny-v1", contextLength: 4096, defaultDtype: "fp32",
      batching: { maxBatch: 16, leftPadding: "exact" },
      pricing: { inputPerMillion: 0.1, cachedInputPerMillion: 0.1, outputPerMillion: 0.4, perImage: null },
    });
  });

  test("pricing: cached_input_per_million is its own price when set, the input price when not; it must be a number ≥ 0", () => {
    expect(parsePricing({ pricing: { input_per_million: 0.3, output_per_million: 1.2, cached_input_per_million: 0.03 } })).toEqual({
      inputPerMillion: 0.3, cachedInputPerMillion: 0.03, outputPerMillion: 1.2, perImage: null,
    });
    expect(parsePricing({ pricing: { input_per_million: 0.3, output_per_million: 1.2 } }).cachedInputPerMillion).toBe(0.3);
    // Dearer than input is the operator's call; free is allowed.
    expect(parsePricing({ pricing: { input_per_million: 0.3, cached_input_per_million: 0.5 } }).cachedInputPerMillion).toBe(0.5);
    expect(parsePricing({ pricing: { input_per_million: 0.3, cached_input_per_million: 0 } }).cachedInputPerMillion).toBe(0);
    expect(parsePricing({}).cachedInputPerMillion).toBe(0);
    for (const bad of [-0.1, "0.1", Number.NaN, Number.POSITIVE_INFINITY, true]) {
      expect(() => parsePricing({ pricing: { input_per_million: 0.3, cached_input_per_million: bad } })).toThrow('"cached_input_per_million" must be a number ≥ 0');
    }
    expect(parseManifest(fakeManifest("cached-v1", { pricing: { input_per_million: 1, output_per_million: 2, cached_input_per_million: 0.25 } }), ["fp32"]).pricing.cachedInputPerMillion).toBe(0.25);
  });

  test("problems are named", () => {
    expect(() => parseManifest(fakeManifest("Bad_Id"), ["fp32"])).toThrow('id "Bad_Id" must be lowercase');
    expect(() => parseManifest(fakeManifest("a-1", { dtypes: ["q4"] }), ["fp32"])).toThrow("dtype q4 has no graph file");
    expect(() => parseManifest(fakeManifest("a-1", { context_length: "big" }), ["fp32"])).toThrow('"context_length" must be a number');
    expect(() => parseManifest(fakeManifest("a-1", { batching: { left_padding: "maybe" } }), ["fp32"])).toThrow("left_padding");
  });

  test("int8 folders built by an older kiln (full-range weights) are refused; 7-bit ones are served", () => {
    const built = { build: { seed: 1, spec_hash: "x", content_hash: "y" }, dtypes: ["int8"], default_dtype: "int8" };
    expect(() => parseManifest(fakeManifest("old-int8-v1", { ...built, kiln_manifest: 1 }), ["int8"])).toThrow("older kiln with the full int8 range");
    expect(() => parseManifest(fakeManifest("old-int8-v1", { ...built, quantization: { int8_max_level: 127 } }), ["int8"])).toThrow("rebuild the folder");
    expect(parseManifest(fakeManifest("new-int8-v1", { ...built, quantization: { int8_max_level: 63 } }), ["int8"]).int8MaxLevel).toBe(63);
    // Not kiln's build: the weights' range is unknown, so it is served and `kiln doctor` warns on CPUs without VNNI.
    expect(parseManifest(fakeManifest("own-int8-v1", { dtypes: ["int8"], default_dtype: "int8" }), ["int8"]).int8MaxLevel).toBeNull();
    // An fp32-only build from an older kiln is still fine.
    expect(parseManifest(fakeManifest("old-fp32-v1", { kiln_manifest: 1, build: built.build }), ["fp32"]).id).toBe("old-fp32-v1");
  });

  test("a manifest from a newer kiln is refused with the reason", () => {
    expect(() => parseManifest(fakeManifest("future-v1", { kiln_manifest: 3 }), ["fp32"])).toThrow("newer than this kiln reads (2): upgrade kiln");
    expect(() => parseManifest(fakeManifest("bad-v1", { kiln_manifest: "2" }), ["fp32"])).toThrow('"kiln_manifest" must be a positive integer');
    expect(() => parseManifest(fakeManifest("bad-v1", { quantization: { int8_max_level: 300 } }), ["fp32"])).toThrow("int8_max_level");
  });

  test("a plain transformers.js folder gets defaults; its GroupQueryAttention formats batch right-padded rows", () => {
    const info = infoFromConfig("Qwen2.5-0.5B-Instruct", { model_type: "qwen2", max_position_embeddings: 32768 }, ["q4", "fp32"], true, ["q4"]);
    expect(info).toMatchObject({
      id: "qwen2.5-0.5b-instruct", contextLength: 32768, defaultDtype: "q4", architecture: "qwen2",
      batching: { maxBatch: 8, leftPadding: "unsafe", rightPadded: ["q4"] },
    });
    expect(info.capabilities.chat).toBe(true);
    const plain = infoFromConfig("Qwen2.5-0.5B-Instruct", { model_type: "qwen2", max_position_embeddings: 32768 }, ["q4"], true, []);
    expect(plain.batching).toEqual({ maxBatch: 8, leftPadding: "exact" });
  });
});
