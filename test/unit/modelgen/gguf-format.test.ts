// GGUF writing: f16 scales, Q8_0/Q4_0 blocks checked by hand, the container read back, and kiln's tensor names and layouts.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PRESETS } from "../../../src/modelgen/index.ts";
import { decodeTensor, encodeQ4_0, encodeQ8_0, f16ToF32, f32ToF16, GGML_TYPE } from "../../../src/modelgen/gguf-blocks.ts";
import { GgufWriter } from "../../../src/modelgen/gguf-file.ts";
import { ggufFileName, installGguf } from "../../../src/modelgen/gguf-install.ts";
import { ggufTensorPlan, interleaveRotaryRows } from "../../../src/modelgen/gguf-model.ts";
import { GgufFile, readGgufMetadata } from "../../../src/modelgen/gguf-read.ts";
import { SPECIAL_TOKENS } from "../../../src/modelgen/tokenizer.ts";
import { TINY_QWEN2 } from "./tiny-specs.ts";

const root = mkdtempSync(join(tmpdir(), "kiln-gguf-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const hex = (b: Uint8Array) => Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");

describe("f16", () => {
  test("rounds to nearest even, with subnormals and overflow", () => {
    expect(f32ToF16(1)).toBe(0x3c00);
    expect(f32ToF16(-2)).toBe(0xc000);
    expect(f32ToF16(0.5)).toBe(0x3800);
    expect(f32ToF16(65504)).toBe(0x7bff);
    expect(f32ToF16(65520)).toBe(0x7c00); // halfway to the next binade rounds up, to infinity
    expect(f32ToF16(2 ** -24)).toBe(0x0001);
    expect(f32ToF16(2 ** -25)).toBe(0x0000); // a tie rounds to the even 0
    expect(f32ToF16(3 * 2 ** -25)).toBe(0x0002); // 1.5 ulps: tie to even 2
    expect(f32ToF16(1 + 2 ** -11)).toBe(0x3c00); // tie to even mantissa 0
    expect(f32ToF16(1 + 3 * 2 ** -11)).toBe(0x3c02); // tie to even mantissa 2
    expect(f32ToF16(1 / 127)).toBe(0x2008); // 2^-7 · (1 + 8.06/1024) → mantissa 8
    for (const h of [0x0001, 0x03ff, 0x0400, 0x2008, 0x3c00, 0x7bff, 0xc000]) expect(f32ToF16(f16ToF32(h))).toBe(h);
  });
});

describe("Q8_0 and Q4_0 blocks", () => {
  test("Q8_0: d = max|x|/127 in f16, q = round(x/d) with halves away from zero", () => {
    const x = Float32Array.from({ length: 32 }, (_, j) => (j - 16) / 16);
    const b = encodeQ8_0(x);
    expect(b.length).toBe(34);
    expect(hex(b.subarray(0, 2))).toBe("0820"); // 0x2008 little-endian
    const q = new Int8Array(b.buffer, 2, 32);
    expect(q[0]).toBe(-127); // −1 · 127
    expect(q[8]).toBe(-64); // −0.5 · 127 = −63.5, away from zero
    expect(q[16]).toBe(0);
    expect(q[24]).toBe(64); // 63.5 → 64
    expect(q[31]).toBe(119); // 15/16 · 127 = 119.06
    const back = decodeTensor(GGML_TYPE.Q8_0, b, 32);
    const d = f16ToF32(0x2008);
    for (let j = 0; j < 32; j++) expect(Math.abs(back[j]! - x[j]!)).toBeLessThanOrEqual(d / 2 + 1e-6);
  });

  test("Q4_0: d = (signed max)/−8, nibbles min(15, ⌊x/d + 8.5⌋), element j low and j+16 high", () => {
    const x = new Float32Array(32);
    x[0] = -4; // the largest magnitude: d = 0.5, and it encodes exactly as 0
    x[1] = 3.5; // 7 + 8.5 → 15
    x[2] = 0.25; // 0.5 + 8.5 → 9
    x[3] = -0.3; // −0.6 + 8.5 = 7.9 → 7
    x[16] = 4; // 8 + 8.5 = 16.5 → clipped to 15
    x[17] = 1; // 2 + 8.5 → 10
    const b = encodeQ4_0(x);
    expect(b.length).toBe(18);
    expect(hex(b.subarray(0, 2))).toBe("0038"); // 0.5 = 0x3800
    expect(hex(b.subarray(2, 6))).toBe("f0af8987"); // 0|15<<4, 15|10<<4, 9|8<<4, 7|8<<4
    expect(hex(b.subarray(6))).toBe("88".repeat(12)); // zeros are 8
    const back = decodeTensor(GGML_TYPE.Q4_0, b, 32);
    expect(back[0]).toBe(-4);
    expect(back[16]).toBe(3.5); // the clipped value: off by |d|
    for (let j = 0; j < 32; j++) if (j !== 16) expect(Math.abs(back[j]! - x[j]!)).toBeLessThanOrEqual(0.25);
  });

  test("an all-zero block encodes with d = 0 and decodes to zeros", () => {
    const z = new Float32Array(64);
    // Q4_0's scale is 0 / −8 = −0, as llama.cpp's own quantizer writes it; values compare equal to 0 either way.
    expect(decodeTensor(GGML_TYPE.Q8_0, encodeQ8_0(z), 64).every((v) => v === 0)).toBe(true);
    expect(decodeTensor(GGML_TYPE.Q4_0, encodeQ4_0(z), 64).every((v) => v === 0)).toBe(true);
  });
});

describe("GGUF container", () => {
  test("header, metadata and aligned tensor data read back", () => {
    const path = join(root, "small.gguf");
    const vec = Float32Array.from([1, 2, 3]);
    const mat = Float32Array.from({ length: 64 }, (_, i) => Math.sin(i));
    const w = new GgufWriter(
      path,
      [
        { key: "general.architecture", type: "string", value: "llama" },
        { key: "n", type: "u32", value: 7 },
        { key: "eps", type: "f32", value: 1e-6 },
        { key: "flag", type: "bool", value: true },
        { key: "words", type: "string[]", value: ["a", "Ġb", "é"] },
        { key: "kinds", type: "i32[]", value: [1, -3] },
        // Far past the header builder's first buffer, as a real vocabulary is.
        { key: "many", type: "string[]", value: Array.from({ length: 20000 }, (_, i) => `token-${i}`) },
        { key: "ints", type: "i32[]", value: Array.from({ length: 50000 }, (_, i) => i - 7) },
      ],
      [
        { name: "v", dims: [3], type: GGML_TYPE.F32 },
        { name: "m", dims: [32, 2], type: GGML_TYPE.Q8_0 },
      ],
    );
    w.append("v", new Uint8Array(vec.buffer));
    w.append("m", encodeQ8_0(mat.subarray(0, 32)));
    w.append("m", encodeQ8_0(mat.subarray(32)));
    w.close();
    const r = GgufFile.open(path);
    try {
      expect(r.version).toBe(3);
      expect(r.kv.get("general.architecture")).toBe("llama");
      expect(r.kv.get("n")).toBe(7);
      expect(r.kv.get("eps")).toBeCloseTo(1e-6, 12);
      expect(r.kv.get("flag")).toBe(true);
      expect(r.kv.get("words")).toEqual(["a", "Ġb", "é"]);
      expect(Array.from(r.kv.get("kinds") as Int32Array)).toEqual([1, -3]);
      expect((r.kv.get("many") as string[]).filter((t, i) => t !== `token-${i}`)).toEqual([]);
      expect(Array.from(r.kv.get("ints") as Int32Array).filter((v, i) => v !== i - 7)).toEqual([]);
      expect(r.tensors.map((t) => [t.name, t.dims, t.type])).toEqual([["v", [3], 0], ["m", [32, 2], 8]]);
      for (const t of r.tensors) expect(t.offset % 32).toBe(0);
      expect(Array.from(new Float32Array(r.readTensorBytes(r.tensors[0]!).buffer))).toEqual([1, 2, 3]);
      const m = decodeTensor(GGML_TYPE.Q8_0, r.readTensorBytes(r.tensors[1]!), 64);
      for (let i = 0; i < 64; i++) expect(Math.abs(m[i]! - mat[i]!)).toBeLessThan(1 / 254 + 1e-3);
      // The second row alone, read at its block's offset.
      expect(decodeTensor(GGML_TYPE.Q8_0, r.readTensorBytes(r.tensors[1]!, 32, 32), 32)).toEqual(m.subarray(32));
      expect(statSync(path).size).toBe(r.tensors[1]!.offset + 96); // 68 bytes, padded to the alignment
    } finally {
      r.close();
    }
  });

  test("the writer refuses data out of order or short", () => {
    const w = new GgufWriter(join(root, "bad.gguf"), [], [{ name: "a", dims: [2], type: GGML_TYPE.F32 }, { name: "b", dims: [1], type: GGML_TYPE.F32 }]);
    expect(() => w.append("b", new Uint8Array(4))).toThrow(/expected a/);
    expect(() => w.append("a", new Uint8Array(12))).toThrow(/overflows/);
    w.append("a", new Uint8Array(8));
    expect(() => w.close()).toThrow(/only 1 of 2/);
  });
});

describe("kiln specs as GGUF", () => {
  test("rotary rows regroup from halves (i, i + D/2) to adjacent pairs (2i, 2i + 1), per head", () => {
    // 2 heads of D = 4, one column: head rows [0 1 2 3] → [0 2 1 3].
    const w = Float32Array.from([0, 1, 2, 3, 10, 11, 12, 13]);
    expect(Array.from(interleaveRotaryRows(w, 2, 4, 1))).toEqual([0, 2, 1, 3, 10, 12, 11, 13]);
  });

  test("tensor names and layouts: llama has an output head, tied Qwen2 has q/k/v biases and none", () => {
    const llama = ggufTensorPlan(PRESETS.tiny!, "q4_0");
    const names = llama.map((t) => t.name);
    expect(names.slice(0, 10)).toEqual([
      "token_embd.weight", "blk.0.attn_norm.weight", "blk.0.attn_q.weight", "blk.0.attn_k.weight", "blk.0.attn_v.weight",
      "blk.0.attn_output.weight", "blk.0.ffn_norm.weight", "blk.0.ffn_gate.weight", "blk.0.ffn_up.weight", "blk.0.ffn_down.weight",
    ]);
    expect(names.slice(-2)).toEqual(["output_norm.weight", "output.weight"]);
    const byName = new Map(llama.map((t) => [t.name, t]));
    expect(byName.get("token_embd.weight")!.dims).toEqual([128, 2048]);
    expect(byName.get("blk.0.attn_k.weight")!.dims).toEqual([128, 64]); // [in, out]: 2 KV heads × 32
    expect(byName.get("blk.0.ffn_down.weight")!.dims).toEqual([384, 128]);
    expect(byName.get("blk.0.attn_norm.weight")!.type).toBe(GGML_TYPE.F32);
    expect(byName.get("blk.0.attn_q.weight")!.type).toBe(GGML_TYPE.Q4_0);
    const qwen = ggufTensorPlan(TINY_QWEN2, "q8_0").map((t) => t.name);
    expect(qwen).toContain("blk.2.attn_v.bias");
    expect(qwen).not.toContain("output.weight");
  });

  test("a written file carries the architecture, the tokenizer and every planned tensor", async () => {
    const { path, built } = await installGguf(root, TINY_QWEN2, "q8_0");
    expect(built).toBe(true);
    expect(path.endsWith(ggufFileName(TINY_QWEN2, "q8_0"))).toBe(true);
    expect((await installGguf(root, TINY_QWEN2, "q8_0")).built).toBe(false);
    const r = readGgufMetadata(path);
    expect(r.kv.get("general.architecture")).toBe("qwen2");
    expect(r.kv.get("general.file_type")).toBe(7);
    expect(r.kv.get("qwen2.attention.head_count_kv")).toBe(2);
    expect(r.kv.get("qwen2.rope.freq_base")).toBe(1e6);
    const tokens = r.kv.get("tokenizer.ggml.tokens") as string[];
    const types = Array.from(r.kv.get("tokenizer.ggml.token_type") as Int32Array);
    expect(tokens.length).toBe(TINY_QWEN2.vocab);
    expect(tokens.slice(-SPECIAL_TOKENS.length)).toEqual([...SPECIAL_TOKENS]);
    expect(types.slice(-SPECIAL_TOKENS.length).every((t) => t === 3)).toBe(true);
    expect(types[0]).toBe(1);
    expect((r.kv.get("tokenizer.ggml.merges") as string[])[0]).toMatch(/^\S+ \S+$/);
    expect(r.kv.get("tokenizer.ggml.eos_token_id")).toBe(TINY_QWEN2.vocab - SPECIAL_TOKENS.length + 2);
    expect(r.tensors.map((t) => t.name)).toEqual(ggufTensorPlan(TINY_QWEN2, "q8_0").map((t) => t.name));
    const last = r.tensors[r.tensors.length - 1]!;
    expect(statSync(path).size).toBeGreaterThanOrEqual(last.offset + 96 * 4);
  });
});
