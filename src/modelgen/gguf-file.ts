// The GGUF v3 container: header, typed metadata, tensor infos, and tensor data streamed in order with alignment padding.
import { closeSync, openSync, writeSync } from "node:fs";
import { ggmlBytes, type GgmlType } from "./gguf-blocks.ts";

export const GGUF_MAGIC = 0x46554747; // "GGUF" read as a little-endian uint32
export const GGUF_VERSION = 3;
/** Tensor data offsets are multiples of this (GGUF's default; also written as general.alignment). */
export const GGUF_ALIGNMENT = 32;

/** GGUF metadata value types. */
export const GGUF_VALUE = { UINT8: 0, INT8: 1, UINT16: 2, INT16: 3, UINT32: 4, INT32: 5, FLOAT32: 6, BOOL: 7, STRING: 8, ARRAY: 9, UINT64: 10, INT64: 11, FLOAT64: 12 } as const;

export type GgufKv =
  | { key: string; type: "u32" | "i32" | "f32" | "u64"; value: number }
  | { key: string; type: "bool"; value: boolean }
  | { key: string; type: "string"; value: string }
  | { key: string; type: "string[]"; value: readonly string[] }
  | { key: string; type: "i32[]"; value: ArrayLike<number> };

export interface GgufTensorInfo {
  name: string;
  /** ggml order: dims[0] is the contiguous one (a Hugging Face [out, in] matrix is [in, out] here). */
  dims: number[];
  type: GgmlType;
}

/** Little-endian byte builder for the header (metadata can run to megabytes: a whole vocabulary and its merges). */
class ByteBuilder {
  private buf = new Uint8Array(1 << 16);
  private view = new DataView(this.buf.buffer);
  length = 0;
  private static enc = new TextEncoder();

  private room(n: number): number {
    if (this.length + n > this.buf.length) {
      const next = new Uint8Array(Math.max(this.buf.length * 2, this.length + n));
      next.set(this.buf.subarray(0, this.length));
      this.buf = next;
      this.view = new DataView(next.buffer);
    }
    const at = this.length;
    this.length += n;
    return at;
  }
  // Each writer asks for room first: room() may replace the buffer and its view, so neither is read before it.
  u32(v: number) {
    const at = this.room(4);
    this.view.setUint32(at, v, true);
  }
  i32(v: number) {
    const at = this.room(4);
    this.view.setInt32(at, v, true);
  }
  f32(v: number) {
    const at = this.room(4);
    this.view.setFloat32(at, v, true);
  }
  u64(v: number) {
    const at = this.room(8);
    this.view.setBigUint64(at, BigInt(v), true);
  }
  u8(v: number) {
    const at = this.room(1);
    this.view.setUint8(at, v);
  }
  str(s: string) {
    const bytes = ByteBuilder.enc.encode(s);
    this.u64(bytes.length);
    const at = this.room(bytes.length);
    this.buf.set(bytes, at);
  }
  zeros(n: number) {
    const at = this.room(n);
    this.buf.fill(0, at, this.length);
  }
  bytes(): Uint8Array { return this.buf.subarray(0, this.length); }
}

function writeKv(b: ByteBuilder, kv: GgufKv): void {
  b.str(kv.key);
  switch (kv.type) {
    case "u32": return b.u32(GGUF_VALUE.UINT32), b.u32(kv.value);
    case "i32": return b.u32(GGUF_VALUE.INT32), b.i32(kv.value);
    case "f32": return b.u32(GGUF_VALUE.FLOAT32), b.f32(kv.value);
    case "u64": return b.u32(GGUF_VALUE.UINT64), b.u64(kv.value);
    case "bool": return b.u32(GGUF_VALUE.BOOL), b.u8(kv.value ? 1 : 0);
    case "string": return b.u32(GGUF_VALUE.STRING), b.str(kv.value);
    case "string[]":
      b.u32(GGUF_VALUE.ARRAY), b.u32(GGUF_VALUE.STRING), b.u64(kv.value.length);
      for (const s of kv.value) b.str(s);
      return;
    case "i32[]":
      b.u32(GGUF_VALUE.ARRAY), b.u32(GGUF_VALUE.INT32), b.u64(kv.value.length);
      for (let i = 0; i < kv.value.length; i++) b.i32(kv.value[i]!);
      return;
  }
}

const alignUp = (n: number) => Math.ceil(n / GGUF_ALIGNMENT) * GGUF_ALIGNMENT;

/** The header bytes (ending padded to the alignment) and each tensor's byte size and offset in the data section. */
export function ggufHeader(kvs: readonly GgufKv[], tensors: readonly GgufTensorInfo[]): { header: Uint8Array; sizes: number[]; offsets: number[] } {
  const b = new ByteBuilder();
  b.u32(GGUF_MAGIC);
  b.u32(GGUF_VERSION);
  b.u64(tensors.length);
  b.u64(kvs.length);
  for (const kv of kvs) writeKv(b, kv);
  const sizes: number[] = [];
  const offsets: number[] = [];
  let offset = 0;
  for (const t of tensors) {
    const size = ggmlBytes(t.type, t.dims.reduce((a, d) => a * d, 1));
    b.str(t.name);
    b.u32(t.dims.length);
    for (const d of t.dims) b.u64(d);
    b.u32(t.type);
    b.u64(offset);
    sizes.push(size);
    offsets.push(offset);
    offset = alignUp(offset + size);
  }
  b.zeros(alignUp(b.length) - b.length);
  return { header: b.bytes(), sizes, offsets };
}

/**
 * Writes a GGUF file front to back: the header at once, then each tensor's bytes in the order of `tensors`, in as many
 * pieces as the caller likes. Sizes are checked, so a writer that skips or repeats a piece fails instead of shifting data.
 */
export class GgufWriter {
  private fd: number;
  private readonly sizes: number[];
  private tensor = 0;
  private written = 0;

  constructor(path: string, kvs: readonly GgufKv[], private readonly tensors: readonly GgufTensorInfo[]) {
    const h = ggufHeader(kvs, tensors);
    this.sizes = h.sizes;
    this.fd = openSync(path, "w");
    this.put(h.header);
  }

  private put(bytes: Uint8Array): void {
    for (let at = 0; at < bytes.length; ) at += writeSync(this.fd, bytes, at, bytes.length - at);
  }

  /** The next bytes of the tensor named `name` (named so a mismatch with the header's order is caught). */
  append(name: string, bytes: Uint8Array): void {
    const t = this.tensors[this.tensor];
    if (!t || t.name !== name) throw new Error(`gguf: got data for ${name}, expected ${t?.name ?? "no more tensors"}`);
    const size = this.sizes[this.tensor]!;
    if (this.written + bytes.length > size) throw new Error(`gguf: ${name} overflows its ${size} bytes`);
    this.put(bytes);
    this.written += bytes.length;
    if (this.written === size) {
      this.put(new Uint8Array(alignUp(size) - size));
      this.tensor++;
      this.written = 0;
    }
  }

  /** Closes the file and checks that every tensor was written in full. */
  close(): void {
    closeSync(this.fd);
    if (this.tensor !== this.tensors.length) throw new Error(`gguf: only ${this.tensor} of ${this.tensors.length} tensors were written`);
  }

  /** Closes the file after a failure, leaving the caller's error the one reported. */
  abort(): void {
    closeSync(this.fd);
  }
}
