// The GGUF reader: every metadata value type from hand-laid bytes (independent of kiln's writer), and a clear error
// for each way a file can be wrong: not GGUF, an unknown version, truncated anywhere, absurd counts.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { GgufFile, readGgufMetadata } from "../../../src/modelgen/gguf-read.ts";

const root = mkdtempSync(join(tmpdir(), "kiln-gguf-read-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Little-endian bytes laid out by hand. */
class Bytes {
  private parts: number[] = [];
  private push(n: number, f: (v: DataView) => void) {
    const b = new DataView(new ArrayBuffer(n));
    f(b);
    this.parts.push(...new Uint8Array(b.buffer));
    return this;
  }
  u8 = (v: number) => this.push(1, (d) => d.setUint8(0, v));
  i8 = (v: number) => this.push(1, (d) => d.setInt8(0, v));
  u16 = (v: number) => this.push(2, (d) => d.setUint16(0, v, true));
  i16 = (v: number) => this.push(2, (d) => d.setInt16(0, v, true));
  u32 = (v: number) => this.push(4, (d) => d.setUint32(0, v, true));
  i32 = (v: number) => this.push(4, (d) => d.setInt32(0, v, true));
  f32 = (v: number) => this.push(4, (d) => d.setFloat32(0, v, true));
  f64 = (v: number) => this.push(8, (d) => d.setFloat64(0, v, true));
  u64 = (v: bigint | number) => this.push(8, (d) => d.setBigUint64(0, BigInt(v), true));
  i64 = (v: bigint) => this.push(8, (d) => d.setBigInt64(0, v, true));
  str(s: string) {
    const b = new TextEncoder().encode(s);
    this.u64(b.length);
    this.parts.push(...b);
    return this;
  }
  pad(to: number) {
    while (this.parts.length % to) this.parts.push(0);
    return this;
  }
  get length() { return this.parts.length; }
  bytes() { return new Uint8Array(this.parts); }
}

function file(name: string, b: Bytes | Uint8Array): string {
  const path = join(root, name);
  writeFileSync(path, b instanceof Bytes ? b.bytes() : b);
  return path;
}

/** A v3 file with one key of each value type and one F32 tensor [2, 3] at offset 0 (alignment 64). */
function everyType(): Bytes {
  const b = new Bytes().u32(0x46554747).u32(3).u64(1).u64(17);
  b.str("general.alignment").u32(4).u32(64);
  b.str("u8").u32(0).u8(250);
  b.str("i8").u32(1).i8(-100);
  b.str("u16").u32(2).u16(65000);
  b.str("i16").u32(3).i16(-32000);
  b.str("u32").u32(4).u32(4_000_000_000);
  b.str("i32").u32(5).i32(-2_000_000_000);
  b.str("f32").u32(6).f32(0.5);
  b.str("bool").u32(7).u8(1);
  b.str("string").u32(8).str("\uFEFFhéllo ▁");
  b.str("u64").u32(10).u64(2n ** 60n);
  b.str("i64").u32(11).i64(-5n);
  b.str("f64").u32(12).f64(Math.PI);
  b.str("f32[]").u32(9).u32(6).u64(2).f32(1.5).f32(-2);
  b.str("bool[]").u32(9).u32(7).u64(2).u8(0).u8(1);
  b.str("nested").u32(9).u32(9).u64(2).u32(8).u64(1).str("x").u32(4).u64(2).u32(7).u32(8);
  b.str("u64[]").u32(9).u32(10).u64(1).u64(7);
  b.str("w").u32(2).u64(2).u64(3).u32(0).u64(0);
  b.pad(64);
  for (let i = 0; i < 6; i++) b.f32(i + 0.25);
  return b;
}

describe("GGUF reader", () => {
  test("every metadata value type, nested arrays, and a tensor's bytes at the alignment the file names", () => {
    const f = GgufFile.open(file("every.gguf", everyType()));
    try {
      const kv = Object.fromEntries(f.kv);
      expect(f.version).toBe(3);
      expect([kv.u8, kv.i8, kv.u16, kv.i16, kv.u32, kv.i32, kv.f32, kv.bool, kv.string]).toEqual([250, -100, 65000, -32000, 4_000_000_000, -2_000_000_000, 0.5, true, "\uFEFFhéllo ▁"]);
      expect(kv.u64).toBe(2n ** 60n); // past 2^53: kept exact
      expect(kv.i64).toBe(-5);
      expect(kv.f64).toBe(Math.PI);
      expect(Array.from(kv["f32[]"] as Float32Array)).toEqual([1.5, -2]);
      expect(kv["bool[]"]).toEqual([false, true]);
      expect(kv.nested).toEqual([["x"], new Uint32Array([7, 8])]);
      expect(Array.from(kv["u64[]"] as BigUint64Array)).toEqual([7n]);
      expect(f.tensors).toEqual([{ name: "w", dims: [2, 3], type: 0, offset: f.dataStart, elements: 6, bytes: 24 }]);
      expect(f.dataStart % 64).toBe(0);
      expect(Array.from(new Float32Array(f.readTensorBytes(f.tensor("w"), 2, 3).buffer))).toEqual([2.25, 3.25, 4.25]);
      expect(() => f.tensor("nope")).toThrow(/no tensor nope/);
    } finally {
      f.close();
    }
  });

  test("version 2 files are read", () => {
    const b = new Bytes().u32(0x46554747).u32(2).u64(0).u64(1).str("k").u32(8).str("v");
    expect(readGgufMetadata(file("v2.gguf", b)).kv.get("k")).toBe("v");
  });

  test("a file that is not GGUF, or of an unknown version, is refused by name", () => {
    expect(() => GgufFile.open(file("magic.gguf", new TextEncoder().encode("PK\u0003\u0004 not a gguf at all")))).toThrow(/not a GGUF file/);
    expect(() => GgufFile.open(file("empty.gguf", new Uint8Array(0)))).toThrow(/not a GGUF file/);
    expect(() => GgufFile.open(file("v1.gguf", new Bytes().u32(0x46554747).u32(1).u64(0).u64(0)))).toThrow(/version 1; versions 2 and 3/);
    expect(() => GgufFile.open(file("be.gguf", new Bytes().u32(0x46554747).u32(0x03000000)))).toThrow(/big-endian/);
  });

  test("a file cut anywhere in its header or its tensor data is reported truncated", () => {
    const whole = everyType().bytes();
    const headerEnd = whole.length - 24;
    for (const cut of [7, 30, 100, headerEnd - 30, whole.length - 1]) {
      expect(() => GgufFile.open(file(`cut-${cut}.gguf`, whole.subarray(0, cut)))).toThrow(/truncated/);
    }
  });

  test("absurd counts and bad tensor infos are refused before anything is allocated", () => {
    const head = () => new Bytes().u32(0x46554747).u32(3);
    expect(() => GgufFile.open(file("kvs.gguf", head().u64(0).u64(2n ** 62n)))).toThrow(/metadata count .* is absurd/);
    expect(() => GgufFile.open(file("arr.gguf", head().u64(0).u64(1).str("a").u32(9).u32(5).u64(1e12)))).toThrow(/element count of a .* is absurd/);
    expect(() => GgufFile.open(file("str.gguf", head().u64(0).u64(1).str("a").u32(8).u64(2n ** 40n)))).toThrow(/string of a length .* is absurd/);
    expect(() => GgufFile.open(file("type.gguf", head().u64(0).u64(1).str("a").u32(13)))).toThrow(/unknown value type 13/);
    const tensor = (dims: number[], type: number, offset: number) => {
      const b = head().u64(1).u64(0).str("t").u32(dims.length);
      for (const d of dims) b.u64(d);
      return b.u32(type).u64(offset).pad(32).bytes();
    };
    expect(() => GgufFile.open(file("dims.gguf", tensor([1, 1, 1, 1, 1], 0, 0)))).toThrow(/5 dimensions/);
    expect(() => GgufFile.open(file("ggml.gguf", tensor([4], 99, 0)))).toThrow(/unknown ggml type 99/);
    expect(() => GgufFile.open(file("block.gguf", tensor([31], 8, 0)))).toThrow(/bad dimensions/);
    expect(() => GgufFile.open(file("align.gguf", tensor([1], 0, 4)))).toThrow(/not aligned/);
  });
});
