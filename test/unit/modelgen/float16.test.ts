// float16Bits rounds exactly as the runtime's Float16Array does (nearest, ties to even, subnormals, overflow, NaN).
import { describe, expect, test } from "bun:test";
import { float16Bits, fromFloat16, toFloat16 } from "../../../src/modelgen/float16.ts";

const F16 = (globalThis as { Float16Array?: new (a: ArrayLike<number>) => ArrayLike<number> & { buffer: ArrayBuffer } }).Float16Array;

describe("float16", () => {
  test("matches Float16Array on edge cases and a million random float32 values", () => {
    if (!F16) throw new Error("this runtime has no Float16Array to compare with");
    const edge = [0, -0, 1, -1, 65504, 65519.99, 65520, 1e6, -1e6, 6.1035156e-5, 6.0e-8, 5.96e-8, 2.98e-8, 2.9802322e-8, 1e-9, 1 + 2 ** -11, 1 + 3 * 2 ** -11, 1e-6, Infinity, -Infinity];
    const rnd = new Float32Array(1_000_000);
    let s = 12345;
    const u = new Uint32Array(rnd.buffer);
    for (let i = 0; i < u.length; i++) {
      s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
      // Random bit patterns over exponents around fp16's range (including its subnormals and overflow), both signs.
      u[i] = (s & 0x807fffff) | ((((s >>> 23) % 48) + 95) << 23);
    }
    for (const values of [Float32Array.from(edge), rnd]) {
      const want = new Uint16Array(new F16(values).buffer);
      const got = toFloat16(values);
      let bad = -1;
      for (let i = 0; i < values.length && bad < 0; i++) if (got[i] !== want[i]) bad = i;
      expect(bad === -1 ? "ok" : `${values[bad]}: ${got[bad]!.toString(16)} ≠ ${want[bad]!.toString(16)}`).toBe("ok");
    }
    expect(float16Bits(NaN) & 0x7c00).toBe(0x7c00);
    expect(float16Bits(NaN) & 0x3ff).not.toBe(0);
  });

  test("fromFloat16 inverts it exactly on every finite half", () => {
    const all = Uint16Array.from({ length: 0x10000 }, (_, i) => i).filter((h) => (h & 0x7c00) !== 0x7c00);
    expect(toFloat16(fromFloat16(all))).toEqual(all);
  });
});
