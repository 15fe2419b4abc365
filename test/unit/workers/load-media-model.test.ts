// Reading a multimodal folder's config.json, and refusing graphs the worker cannot feed (float16 inputs).
import { describe, expect, test } from "bun:test";
import { dtypeSuffix } from "../../../src/models/manifest.ts";
import { mediaModelConfig, requireFloat32 } from "../../../workers/text/load-media-model.ts";
import type { OrtSessionLike } from "../../../workers/text/ort-runner.ts";

const session = (name: string, type: string): OrtSessionLike => ({
  inputNames: [name], outputNames: [], inputMetadata: [{ name, isTensor: true, type, shape: [] }], run: async () => ({}),
});

describe("multimodal folders", () => {
  test("config.json gives the kinds, placeholder ids and the decoder's config", () => {
    const l = mediaModelConfig({ model_type: "kiln_omni", image_token_index: 7, audio_token_index: 8, eos_token_id: 3, text_config: { hidden_size: 64, num_hidden_layers: 2, vocab_size: 100 } });
    expect([l.kinds, l.tokenIds, l.hidden, l.text.eos_token_id, l.text.vocab_size]).toEqual([["image", "audio"], { image: 7, audio: 8 }, 64, 3, 100]);
    expect(() => mediaModelConfig({ model_type: "qwen2_vl", text_config: { hidden_size: 8 } })).toThrow(/not served/);
    expect(() => mediaModelConfig({ model_type: "llava", text_config: { hidden_size: 8 } })).toThrow(/image_token_index/);
    expect([dtypeSuffix("fp32"), dtypeSuffix("q4"), dtypeSuffix("fp16")]).toEqual(["", "_q4", "_fp16"]);
  });

  test("a graph taking float16 embeddings or pixels is refused at load, naming it", () => {
    expect(() => requireFloat32(session("inputs_embeds", "float32"), "inputs_embeds", "decoder_model_merged")).not.toThrow();
    expect(() => requireFloat32(session("inputs_embeds", "float16"), "inputs_embeds", "decoder_model_merged")).toThrow(
      "decoder_model_merged's inputs_embeds is float16; kiln runs multimodal graphs that take float32",
    );
    expect(() => requireFloat32(session("pixel_values", "float16"), "pixel_values", "vision_encoder")).toThrow(/vision_encoder's pixel_values is float16/);
  });
});
