// ggml's tensor types: hand-built blocks decode to the values llama.cpp's dequantize_row_* gives (pinning each layout
// apart from kiln's encoders), every encoder round-trips within its stated bound, and unknown types are named.
import { describe, expect, test } from "bun:test";
import { decodeTensor, encodeTensor, GGML_TYPE, ggmlBytes, ggmlTypeName } from "../../../src/modelgen/gguf-blocks.ts";
import { errorBounds } from "./ggml-bounds.ts";

/** A block of `size` bytes with `set` written at their offsets (little-endian u16 for the f16 fields). */
function block(size: number, set: Record<number, number>, f16: Record<number, number> = {}): Uint8Array {
  const b = new Uint8Array(size);
  for (const [at, v] of Object.entries(set)) b[Number(at)] = v;
  for (const [at, h] of Object.entries(f16)) (b[Number(at)] = h & 0xff), (b[Number(at) + 1] = h >> 8);
  return b;
}
const F16 = { half: 0x3800, quarter: 0x3400, one: 0x3c00, two: 0x4000, minusOne: 0xbc00 };

describe("hand-built blocks decode as llama.cpp's dequantize_row_*", () => {
  test("F16 and BF16", () => {
    expect(Array.from(decodeTensor(GGML_TYPE.F16, block(4, {}, { 0: 0x3c00, 2: 0xc000 }), 2))).toEqual([1, -2]);
    expect(Array.from(decodeTensor(GGML_TYPE.BF16, block(4, {}, { 0: 0x3f80, 2: 0xc040 }), 2))).toEqual([1, -3]);
  });

  test("Q4_0 {d; qs[16]}: (q − 8)·d, element j in qs[j]'s low nibble, j + 16 in its high one", () => {
    const y = decodeTensor(GGML_TYPE.Q4_0, block(18, { 2: 0x1f, 3: 0x88 }, { 0: F16.half }), 32);
    expect([y[0], y[16], y[1], y[17], y[5]]).toEqual([3.5, -3.5, 0, 0, -4]);
  });

  test("Q4_1 {d; m; qs[16]}: q·d + m", () => {
    const y = decodeTensor(GGML_TYPE.Q4_1, block(20, { 5: 0x3a }, { 0: F16.half, 2: F16.minusOne }), 32);
    expect([y[1], y[17], y[0]]).toEqual([4, 0.5, -1]);
  });

  test("Q5_0 {d; qh[4]; qs[16]}: bit j of the u32 qh is element j's 5th bit, bit j + 16 element j + 16's", () => {
    const y = decodeTensor(GGML_TYPE.Q5_0, block(22, { 2: 0x04, 4: 0x04, 8: 0x21 }, { 0: F16.quarter }), 32);
    expect([y[2], y[18], y[0], y[16]]).toEqual([0.25, 0.5, -4, -4]);
  });

  test("Q5_1 {d; m; qh[4]; qs[16]}: q·d + m with the 5th bit", () => {
    const y = decodeTensor(GGML_TYPE.Q5_1, block(24, { 7: 0x80, 23: 0xf3 }, { 0: F16.one, 2: F16.half }), 32);
    expect([y[15], y[31], y[0]]).toEqual([3.5, 31.5, 0.5]);
  });

  test("Q8_0 {d; int8 qs[32]}", () => {
    const y = decodeTensor(GGML_TYPE.Q8_0, block(34, { 2: 0xff, 33: 0x7f }, { 0: F16.two }), 32);
    expect([y[0], y[31], y[1]]).toEqual([-2, 254, 0]);
  });

  test("IQ4_NL {d; qs[16]}: Q4_0's nibbles index kvalues_iq4nl", () => {
    const y = decodeTensor(GGML_TYPE.IQ4_NL, block(18, { 2: 0xf0, 3: 0x78 }, { 0: F16.half }), 32);
    // Nibble 0 → −127, 15 → 113, 8 → 1, 7 → −10.
    expect([y[0], y[16], y[1], y[17]]).toEqual([-63.5, 56.5, 0.5, -5]);
  });

  test("Q2_K {scales[16]; qs[64]; d; dmin}: d·(sc & 15)·q − dmin·(sc >> 4), 2-bit q at shift 2·((e/32)%4)", () => {
    // Sub-block 0: sc 1, min 2; sub-block 5: sc 3, min 1; sub-block 15: sc 0, min 15.
    const b = block(84, { 0: 0x21, 5: 0x13, 15: 0xf0, [16 + 3]: 0x03, [16 + 16]: 0x20, [16 + 63]: 0xc0 }, { 80: F16.half, 82: F16.quarter });
    const y = decodeTensor(GGML_TYPE.Q2_K, b, 256);
    // e 3: qs[3] shift 0; e 80 (sub-block 5): qs[16] shift 4; e 255: qs[32 + 31] shift 6.
    expect([y[3], y[80], y[255], y[0], y[16]]).toEqual([1, 2.75, -3.75, -0.5, 0]); // e 16: sub-block 1 is all zero
  });

  test("Q3_K {hmask[32]; qs[64]; scales[12]; d}: 6-bit scales − 32, q = low 2 bits + 4·hmask bit − 4", () => {
    // Scale 0 = +2 (stored 34: low nibble 2 in byte 0, top bits 2 in byte 8 bits 0-1); scale 9 = −3 (stored 29: low
    // nibble 13 in byte 1's high nibble, top bits 1 in byte 9 bits 4-5); the rest stored 0, i.e. −32.
    const b = block(110, { 5: 0x01, [32 + 5]: 0x01, [32 + 54 - 32 + 32]: 0x02, [96 + 0]: 0x02, [96 + 1]: 0xd0, [96 + 8]: 0x02, [96 + 9]: 0x10 }, { 108: F16.one });
    const y = decodeTensor(GGML_TYPE.Q3_K, b, 256);
    // e 5: low bits 1, high bit set → q 1; e 150 (sub-block 9): qs[32 + 22] low bits 2, hmask[22] bit 4 clear → −2;
    // e 6: all clear → −4; e 16 (sub-block 1, scale −32), all clear → 128.
    expect([y[5], y[150], y[6], y[16]]).toEqual([2, 6, -8, 128]);
  });

  test("Q4_K {d; dmin; scales[12]; qs[128]}: get_scale_min_k4's 6-bit packing, nibbles by 64-element halves", () => {
    // Sub-block 0: sc 3, m 2. Sub-block 5: sc 17, m 33 (low nibbles in scales[9], top bits in scales[1] and scales[5]).
    const b = block(144, { [4 + 0]: 3, [4 + 4]: 2, [4 + 9]: 0x11, [4 + 1]: 0x40, [4 + 5]: 0x80, [16 + 1]: 0x0a, [16 + 65]: 0x70 }, { 0: F16.one, 2: F16.half });
    const y = decodeTensor(GGML_TYPE.Q4_K, b, 256);
    // e 1: low nibble of qs[1] = 10 → 3·10 − 1; e 161 = 64·2 + 32 + 1: high nibble of qs[65] = 7 → 17·7 − 16.5.
    expect([y[1], y[161], y[0]]).toEqual([29, 102.5, -1]);
  });

  test("Q5_K {d; dmin; scales[12]; qh[32]; qs[128]}: Q4_K's nibbles plus bit 2j (+1 for the upper 32) of qh[l]", () => {
    const b = block(176, { [4 + 0]: 3, [4 + 4]: 2, [4 + 9]: 0x11, [4 + 1]: 0x40, [4 + 5]: 0x80, [16 + 1]: 0x20, [48 + 1]: 0x0a, [48 + 65]: 0x70 }, { 0: F16.one, 2: F16.half });
    const y = decodeTensor(GGML_TYPE.Q5_K, b, 256);
    // e 161: nibble 7 plus qh[1] bit 5 → 23: 17·23 − 16.5. e 1: qh[1] bit 0 clear → 29 as in Q4_K.
    expect([y[1], y[161], y[0]]).toEqual([29, 374.5, -1]);
  });

  test("Q6_K {ql[128]; qh[64]; int8 scales[16]; d}: d·sc·(q − 32), q = ql nibble | 2 qh bits << 4", () => {
    const b = block(210, { 3: 0x05, [128 + 3]: 0x02, 87: 0x30, [192 + 0]: 2, [192 + 13]: 0xff }, { 208: F16.half });
    const y = decodeTensor(GGML_TYPE.Q6_K, b, 256);
    // e 3: 5 | 2 << 4 = 37 → 0.5·2·5; e 215 = 128 + 64 + 23: high nibble of ql[64 + 23] = 3 → 0.5·(−1)·(3 − 32).
    expect([y[3], y[215], y[0]]).toEqual([5, 14.5, -32]);
  });
});

/** Gaussian-ish values with a different spread in every 32-element block, an outlier and a run of exact zeros. */
function testValues(n: number, seed: number): Float32Array {
  let s = seed >>> 0;
  const rand = () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
  const x = new Float32Array(n);
  for (let i = 0; i < n; i++) x[i] = (rand() + rand() + rand() - 1.5) * 0.05 * (1 + ((i >> 5) % 7));
  x[7] = 0.9;
  x.fill(0, 256, 288);
  for (let i = 512; i < 768; i++) x[i] = 0.01 + (i % 16) * 1e-4; // an all-positive super-block
  return x;
}

const ALL = Object.entries(GGML_TYPE);

describe("every type round-trips within its stated bound", () => {
  test.each(ALL)("%s", (_name, type) => {
    const x = testValues(2048, type + 1);
    const bytes = encodeTensor(type, x);
    expect(bytes.length).toBe(ggmlBytes(type, x.length));
    const y = decodeTensor(type, bytes, x.length);
    const bound = errorBounds(type, x);
    let worst = 0;
    for (let i = 0; i < x.length; i++) {
      if (!(Math.abs(y[i]! - x[i]!) <= bound[i]!)) throw new Error(`element ${i}: ${x[i]} came back ${y[i]} (bound ${bound[i]})`);
      if (bound[i]) worst = Math.max(worst, Math.abs(y[i]! - x[i]!) / bound[i]!);
    }
    // The bound is not slack to the point of meaning nothing: some value uses most of it (F32 is exact).
    if (type !== GGML_TYPE.F32) expect(worst).toBeGreaterThan(0.3);
    // An all-zero run decodes to zeros (Q4_0's and Q5_0's scale is 0 / −8 = −0, as llama.cpp writes it: −0 values).
    expect(y.subarray(256, 288).every((v) => v === 0)).toBe(true);
  });

  test("decoding reads from any byte offset, and only the elements asked for", () => {
    const x = testValues(512, 3);
    for (const [, type] of ALL) {
      const bytes = encodeTensor(type, x);
      const shifted = new Uint8Array(bytes.length + 3);
      shifted.set(bytes, 3);
      expect(decodeTensor(type, shifted.subarray(3), 256)).toEqual(decodeTensor(type, bytes, 512).subarray(0, 256));
    }
  });
});

describe("type table", () => {
  test("block sizes as ggml's type traits", () => {
    const sizes = Object.fromEntries(ALL.map(([name, type]) => [name, ggmlBytes(type, 256)]));
    expect(sizes).toEqual({ F32: 1024, F16: 512, BF16: 512, Q4_0: 144, Q4_1: 160, Q5_0: 176, Q5_1: 192, Q8_0: 272, IQ4_NL: 144, Q2_K: 84, Q3_K: 110, Q4_K: 144, Q5_K: 176, Q6_K: 210 });
    expect(() => ggmlBytes(GGML_TYPE.Q4_K, 128)).toThrow("Q4_K: 128 elements are not whole 256-element blocks");
  });

  test("unknown and unsupported types are named in the error", () => {
    expect(ggmlTypeName(GGML_TYPE.Q6_K)).toBe("Q6_K");
    expect(ggmlTypeName(23)).toBe("IQ4_XS");
    expect(ggmlTypeName(99)).toBe("type 99");
    expect(() => decodeTensor(23, new Uint8Array(136), 256)).toThrow("ggml type IQ4_XS (id 23) is not one kiln can read or write");
    expect(() => encodeTensor(99, new Float32Array(32))).toThrow("ggml type type 99 (id 99)");
    expect(() => decodeTensor(GGML_TYPE.Q8_0, new Uint8Array(33), 32)).toThrow("need 34 bytes, got 33");
  });
});
