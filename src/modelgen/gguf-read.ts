// Reads a GGUF v2/v3 file (llama.cpp's format) with positioned reads: header, metadata and tensor infos up front, each
// tensor's bytes on demand, so a file of many gigabytes never sits in memory. Every tensor's extent is checked at open.
import { closeSync, fstatSync, openSync, readSync } from "node:fs";

const MAGIC = 0x46554747; // "GGUF" as a little-endian uint32
/** Header reads go through a window this large (metadata is read front to back). */
const WINDOW = 1 << 20;
/** llama.cpp's GGML_MAX_DIMS. */
const MAX_DIMS = 4;

/** A metadata value: numbers (u64/i64 past 2^53 stay bigint), strings, bools, and arrays (numeric ones typed). */
export type GgufValue = number | bigint | boolean | string | GgufArray;
export type GgufArray =
  | Uint8Array | Int8Array | Uint16Array | Int16Array | Uint32Array | Int32Array | Float32Array | Float64Array
  | BigUint64Array | BigInt64Array | boolean[] | string[] | GgufArray[];

export interface GgufTensor {
  name: string;
  /** ggml order: dims[0] is the contiguous one. */
  dims: number[];
  /** ggml_type id. */
  type: number;
  /** Absolute byte offset of the tensor's data in the file. */
  offset: number;
  elements: number;
  bytes: number;
}

/** [elements per block, bytes per block] of each ggml type a GGUF file may hold (ggml.c's type_traits). */
const GGML_BLOCKS: Record<number, [number, number]> = {
  0: [1, 4], 1: [1, 2], 2: [32, 18], 3: [32, 20], 6: [32, 22], 7: [32, 24], 8: [32, 34], 9: [32, 36],
  10: [256, 84], 11: [256, 110], 12: [256, 144], 13: [256, 176], 14: [256, 210], 15: [256, 292],
  16: [256, 66], 17: [256, 74], 18: [256, 98], 19: [256, 50], 20: [32, 18], 21: [256, 110], 22: [256, 82], 23: [256, 136],
  24: [1, 1], 25: [1, 2], 26: [1, 4], 27: [1, 8], 28: [1, 8], 29: [256, 56], 30: [1, 2], 34: [256, 54], 35: [256, 66], 39: [32, 17],
};

/** Byte size of each scalar value type (GGUF_VALUE ids); 7 is bool, 8 string and 9 array are handled apart. */
const SCALAR_SIZE: Record<number, number> = { 0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8 };

/** Front-to-back reads of the header through a window of the file. */
class Cursor {
  pos = 0;
  private buf = new Uint8Array(WINDOW);
  private view = new DataView(this.buf.buffer);
  private start = 0;
  private end = 0;
  // ignoreBOM keeps a leading U+FEFF: tokens such as Gemma's "\uFEFF//" start with one.
  private static dec = new TextDecoder("utf-8", { ignoreBOM: true });

  constructor(private readonly fd: number, readonly size: number, private readonly path: string) {}

  /** Makes bytes [pos, pos + n) available in the window and returns their index there. */
  private take(n: number, what: string): number {
    if (this.pos + n > this.size) throw new Error(`gguf: ${this.path} is truncated: ${what} at byte ${this.pos} runs past the end (${this.size} bytes)`);
    if (this.pos < this.start || this.pos + n > this.end) {
      if (n > this.buf.length) (this.buf = new Uint8Array(n)), (this.view = new DataView(this.buf.buffer));
      const want = Math.min(this.buf.length, this.size - this.pos);
      let got = 0;
      while (got < want) {
        const r = readSync(this.fd, this.buf, got, want - got, this.pos + got);
        if (r === 0) break;
        got += r;
      }
      this.start = this.pos;
      this.end = this.pos + got;
    }
    const at = this.pos - this.start;
    this.pos += n;
    return at;
  }

  u8 = () => this.view.getUint8(this.take(1, "a value"));
  i8 = () => this.view.getInt8(this.take(1, "a value"));
  u16 = () => this.view.getUint16(this.take(2, "a value"), true);
  i16 = () => this.view.getInt16(this.take(2, "a value"), true);
  u32 = () => this.view.getUint32(this.take(4, "a value"), true);
  i32 = () => this.view.getInt32(this.take(4, "a value"), true);
  f32 = () => this.view.getFloat32(this.take(4, "a value"), true);
  f64 = () => this.view.getFloat64(this.take(8, "a value"), true);
  u64big = () => this.view.getBigUint64(this.take(8, "a value"), true);
  i64big = () => this.view.getBigInt64(this.take(8, "a value"), true);

  /** A u64 used as a count or size: refused past `limit` (or past what JS counts exactly). */
  count(what: string, limit: number): number {
    const v = this.u64big();
    if (v > BigInt(limit)) throw new Error(`gguf: ${this.path}: ${what} of ${v} is absurd (at most ${limit} fit in the rest of the file): it is truncated or corrupt`);
    return Number(v);
  }

  str(what: string): string {
    const n = this.count(`${what} length`, this.size - this.pos - 8);
    const at = this.take(n, what);
    return Cursor.dec.decode(this.buf.subarray(at, at + n));
  }
}

/** A number for u64/i64 values JS holds exactly, else the bigint. */
const exact = (v: bigint): number | bigint => (v <= BigInt(Number.MAX_SAFE_INTEGER) && v >= BigInt(Number.MIN_SAFE_INTEGER) ? Number(v) : v);

function readScalar(c: Cursor, type: number, key: string): GgufValue {
  switch (type) {
    case 0: return c.u8();
    case 1: return c.i8();
    case 2: return c.u16();
    case 3: return c.i16();
    case 4: return c.u32();
    case 5: return c.i32();
    case 6: return c.f32();
    case 7: return c.u8() !== 0;
    case 8: return c.str(`the string of ${key}`);
    case 9: return readArray(c, key);
    case 10: return exact(c.u64big());
    case 11: return exact(c.i64big());
    case 12: return c.f64();
    default: throw new Error(`gguf: metadata ${key} has unknown value type ${type}`);
  }
}

const TYPED: Record<number, { new (n: number): GgufArray & { [i: number]: number | bigint } }> = {
  0: Uint8Array, 1: Int8Array, 2: Uint16Array, 3: Int16Array, 4: Uint32Array, 5: Int32Array, 6: Float32Array, 10: BigUint64Array, 11: BigInt64Array, 12: Float64Array,
} as never;

function readArray(c: Cursor, key: string): GgufArray {
  const elem = c.u32();
  // Each element takes at least one byte (a string eight, an array twelve), so a count past the file is absurd.
  const min = elem === 8 ? 8 : elem === 9 ? 12 : SCALAR_SIZE[elem];
  if (min === undefined) throw new Error(`gguf: metadata ${key} is an array of unknown value type ${elem}`);
  const n = c.count(`the element count of ${key}`, Math.floor((c.size - c.pos - 8) / min));
  const Typed = TYPED[elem];
  if (Typed) {
    const out = new Typed(n);
    // 64-bit integer arrays keep every element as a bigint (their typed arrays hold nothing else).
    const read = elem === 10 ? c.u64big : elem === 11 ? c.i64big : () => readScalar(c, elem, key) as number;
    for (let i = 0; i < n; i++) out[i] = read();
    return out;
  }
  return Array.from({ length: n }, () => readScalar(c, elem, key)) as GgufArray;
}

const alignUp = (n: number, a: number) => Math.ceil(n / a) * a;

/** An open GGUF file: its metadata and tensor infos, and positioned reads of tensor data. Call close() when done. */
export class GgufFile {
  private constructor(
    private readonly fd: number,
    readonly path: string,
    readonly size: number,
    readonly version: number,
    readonly kv: Map<string, GgufValue>,
    readonly tensors: GgufTensor[],
    /** Absolute offset of the data section (tensor offsets in the header are relative to it). */
    readonly dataStart: number,
  ) {}

  /** Opens and checks `path`: magic, version, every value, and that each tensor's data lies within the file. */
  static open(path: string): GgufFile {
    const fd = openSync(path, "r");
    try {
      return GgufFile.parse(fd, path);
    } catch (e) {
      closeSync(fd);
      throw e;
    }
  }

  private static parse(fd: number, path: string): GgufFile {
    const size = fstatSync(fd).size;
    const c = new Cursor(fd, size, path);
    if (size < 4 || c.u32() !== MAGIC) throw new Error(`gguf: ${path} is not a GGUF file (no "GGUF" magic at its start)`);
    const version = c.u32();
    if (version === 0x03000000 || version === 0x02000000) throw new Error(`gguf: ${path} is a big-endian GGUF, which is not supported`);
    if (version !== 2 && version !== 3) throw new Error(`gguf: ${path} is GGUF version ${version}; versions 2 and 3 are supported`);
    // A tensor info takes at least 24 bytes and a key/value 13, which bounds both counts by the file's size.
    const nTensors = c.count("the tensor count", Math.floor(size / 24));
    const nKv = c.count("the metadata count", Math.floor(size / 13));
    const kv = new Map<string, GgufValue>();
    for (let i = 0; i < nKv; i++) {
      const key = c.str("a metadata key");
      kv.set(key, readScalar(c, c.u32(), key));
    }
    const alignment = kv.get("general.alignment") ?? 32;
    if (typeof alignment !== "number" || alignment <= 0 || alignment % 8 !== 0) throw new Error(`gguf: ${path}: general.alignment ${alignment} is not a positive multiple of 8`);
    const infos = Array.from({ length: nTensors }, () => {
      const name = c.str("a tensor name");
      const nDims = c.u32();
      if (nDims < 1 || nDims > MAX_DIMS) throw new Error(`gguf: ${path}: tensor ${name} has ${nDims} dimensions (1 to ${MAX_DIMS} allowed)`);
      const dims = Array.from({ length: nDims }, () => c.count(`a dimension of ${name}`, Number.MAX_SAFE_INTEGER));
      const type = c.u32();
      const rel = c.count(`the data offset of ${name}`, size);
      return { name, dims, type, rel };
    });
    const dataStart = alignUp(c.pos, alignment);
    const tensors = infos.map(({ name, dims, type, rel }) => {
      const block = GGML_BLOCKS[type];
      if (!block) throw new Error(`gguf: ${path}: tensor ${name} has unknown ggml type ${type}`);
      const elements = dims.reduce((a, d) => a * d, 1);
      if (!Number.isSafeInteger(elements) || dims[0]! % block[0] !== 0) throw new Error(`gguf: ${path}: tensor ${name} has bad dimensions [${dims}] for ggml type ${type}`);
      if (rel % alignment !== 0) throw new Error(`gguf: ${path}: tensor ${name}'s data offset ${rel} is not aligned to ${alignment}`);
      const bytes = (elements / block[0]) * block[1];
      const offset = dataStart + rel;
      if (offset + bytes > size) throw new Error(`gguf: ${path} is truncated: tensor ${name} needs bytes ${offset} to ${offset + bytes}, the file has ${size}`);
      return { name, dims, type, offset, elements, bytes };
    });
    return new GgufFile(fd, path, size, version, kv, tensors, dataStart);
  }

  /** The tensor named `name`, or an error naming it. */
  tensor(name: string): GgufTensor {
    const t = this.tensors.find((x) => x.name === name);
    if (!t) throw new Error(`gguf: ${this.path} has no tensor ${name}`);
    return t;
  }

  /** Raw bytes of elements [from, from + count) of `t`; both must fall on the type's block boundaries. */
  readTensorBytes(t: GgufTensor, from = 0, count = t.elements - from): Uint8Array {
    const [per, bytes] = GGML_BLOCKS[t.type]!;
    if (from < 0 || count < 0 || from + count > t.elements || from % per !== 0 || count % per !== 0) {
      throw new Error(`gguf: elements ${from}..${from + count} of ${t.name} (${t.elements}) are not whole blocks of ${per} within it`);
    }
    const out = new Uint8Array((count / per) * bytes);
    const at = t.offset + (from / per) * bytes;
    for (let got = 0; got < out.length; ) {
      const r = readSync(this.fd, out, got, out.length - got, at + got);
      if (r === 0) throw new Error(`gguf: ${this.path} ended while reading ${t.name}`);
      got += r;
    }
    return out;
  }

  close(): void {
    closeSync(this.fd);
  }
}

/** Reads `path`'s metadata and tensor infos and closes it (for callers that need no tensor data). */
export function readGgufMetadata(path: string): { version: number; kv: Map<string, GgufValue>; tensors: GgufTensor[] } {
  const f = GgufFile.open(path);
  f.close();
  return { version: f.version, kv: f.kv, tensors: f.tensors };
}
