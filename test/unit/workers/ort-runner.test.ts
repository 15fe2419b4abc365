import { describe, expect, test } from "bun:test";
import { graphLayout, halfToFloat, lastPositionLogits } from "../../../workers/text/ort-runner.ts";

const pastNames = (layers: number) => Array.from({ length: layers }, (_, i) => [`past_key_values.${i}.key`, `past_key_values.${i}.value`]).flat();
const presentNames = (layers: number) => pastNames(layers).map((n) => n.replace("past_key_values", "present"));

describe("graphLayout", () => {
  test("orders cache inputs by layer, reads shape from metadata and notes optional inputs", () => {
    // Listed out of order on purpose: layer 10 must come after layer 2.
    const inputs = ["input_ids", "attention_mask", "position_ids", ...pastNames(11).reverse(), "num_logits_to_keep"];
    const layout = graphLayout(
      {
        inputNames: inputs,
        outputNames: ["logits", ...presentNames(11)],
        inputMetadata: [{ name: "past_key_values.10.value", isTensor: true, type: "float32", shape: ["batch_size", 2, "past_sequence_length", 64] }],
      },
      { num_key_value_heads: 99, head_dim: 99 },
    );
    expect(layout.pastNames.slice(0, 4)).toEqual(["past_key_values.0.key", "past_key_values.0.value", "past_key_values.1.key", "past_key_values.1.value"]);
    expect(layout.pastNames[21]).toBe("past_key_values.10.value");
    expect(layout.presentNames[21]).toBe("present.10.value");
    expect([layout.kvHeads, layout.headDim, layout.kvType]).toEqual([99, 99, "float32"]);
    expect([layout.hasPositionIds, layout.hasLogitsToKeep, layout.hasUseCacheBranch]).toEqual([true, true, false]);
    expect(layout.tokenInput).toBe("input_ids");
  });

  test("a multimodal decoder takes its tokens as inputs_embeds", () => {
    const names = { inputNames: ["inputs_embeds", "attention_mask", ...pastNames(1)], outputNames: ["logits", ...presentNames(1)] };
    expect(graphLayout(names, { num_key_value_heads: 2, head_dim: 8 }).tokenInput).toBe("inputs_embeds");
  });

  test("takes KV heads and head_dim from the first past input's numeric dims, else from config", () => {
    const base = { inputNames: ["input_ids", "attention_mask", ...pastNames(1)], outputNames: ["logits", ...presentNames(1)] };
    const fromMeta = graphLayout({ ...base, inputMetadata: [{ name: "past_key_values.0.key", type: "float16", shape: ["b", 2, "p", 64] }] }, {});
    expect([fromMeta.kvHeads, fromMeta.headDim, fromMeta.kvType]).toEqual([2, 64, "float16"]);
    const fromConfig = graphLayout(base, { num_attention_heads: 14, num_key_value_heads: 2, hidden_size: 896 });
    expect([fromConfig.kvHeads, fromConfig.headDim, fromConfig.hasPositionIds]).toEqual([2, 64, false]);
  });

  test("rejects graphs it cannot drive", () => {
    const ok = { inputNames: ["input_ids", "attention_mask", ...pastNames(1)], outputNames: ["logits", ...presentNames(1)] };
    const cfg = { num_key_value_heads: 2, head_dim: 8 };
    expect(() => graphLayout({ ...ok, inputNames: ["input_ids", ...pastNames(1)] }, cfg)).toThrow('no "attention_mask"');
    expect(() => graphLayout({ ...ok, inputNames: [...ok.inputNames, "inputs_embeds"] }, cfg)).toThrow('both "input_ids" and "inputs_embeds"');
    expect(() => graphLayout({ ...ok, inputNames: [...ok.inputNames, "pixel_values"] }, cfg)).toThrow("unsupported graph inputs: pixel_values");
    expect(() => graphLayout({ ...ok, inputNames: ["input_ids", "attention_mask"] }, cfg)).toThrow("no past_key_values");
    expect(() => graphLayout({ ...ok, outputNames: ["logits"] }, cfg)).toThrow("lacks outputs present.0.key");
    expect(() => graphLayout(ok, {})).toThrow("cannot tell KV heads");
  });
});

describe("lastPositionLogits", () => {
  test("returns [B, V] logits as they are when S = 1", () => {
    const data = Float32Array.of(1, 2, 3, 4);
    const r = lastPositionLogits({ data, dims: [2, 1, 2], type: "float32" });
    expect(r.vocab).toBe(2);
    expect(r.logits).toBe(data);
  });

  test("picks each row's last position when the graph returns every position", () => {
    // [B=2, S=3, V=2]
    const data = Float32Array.from({ length: 12 }, (_, i) => i);
    const r = lastPositionLogits({ data, dims: [2, 3, 2], type: "float32" });
    expect(Array.from(r.logits)).toEqual([4, 5, 10, 11]);
  });

  test("widens float16 words", () => {
    const r = lastPositionLogits({ data: Uint16Array.of(0x3c00, 0xc000), dims: [1, 1, 2], type: "float16" });
    expect(Array.from(r.logits)).toEqual([1, -2]);
  });
});

describe("halfToFloat", () => {
  test("decodes normals, subnormals, zero and specials", () => {
    const out = halfToFloat(Uint16Array.of(0x3c00, 0x3555, 0x0001, 0x8000, 0x7c00, 0xfc00, 0x7e00, 0x7bff));
    expect(out[0]).toBe(1);
    expect(out[1]).toBeCloseTo(0.33325, 5);
    expect(out[2]).toBe(2 ** -24);
    expect(Object.is(out[3], -0)).toBe(true);
    expect(out[4]).toBe(Infinity);
    expect(out[5]).toBe(-Infinity);
    expect(Number.isNaN(out[6])).toBe(true);
    expect(out[7]).toBe(65504);
  });
});
