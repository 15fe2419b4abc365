// Hugging Face safetensors files (one, or several named by model.safetensors.index.json): the JSON header of each
// and tensor rows read on demand with positioned reads, as float32 from F32, F16 or BF16.
import { closeSync, existsSync, fstatSync, openSync, readFileSync, readSync } from "node:fs";
import { join } from "node:path";
import { decodeTensor, GGML_TYPE } from "../gguf-blocks.ts";

/** The element types kiln reads; quantized safetensors (GPTQ, AWQ, FP8) are refused with their type named. */
const ELEMENT_BYTES: Record<string, number> = { F32: 4, F16: 2, BF16: 2 };

export interface SafeTensor {
  name: string;
  dtype: string;
  shape: number[];
  /** The file descriptor of its shard and the absolute byte offset of its data. */
  fd: number;
  at: number;
  bytes: number;
}

/** A header larger than this is not a safetensors header (real ones are tens of KB to a few MB). */
const MAX_HEADER_BYTES = 100 * 1024 * 1024;

/** Reads the header of one shard: every tensor's type, shape and extent, checked against the file's size. */
export function readSafetensorsHeader(path: string, fd: number): SafeTensor[] {
  const size = fstatSync(fd).size;
  const fail = (why: string) => new Error(`${path}: ${why}`);
  if (size < 8) throw fail("not a safetensors file (shorter than its 8-byte header length)");
  const head = Buffer.alloc(8);
  readSync(fd, head, 0, 8, 0);
  const headerLen = Number(head.readBigUInt64LE(0));
  if (headerLen < 2 || headerLen > MAX_HEADER_BYTES || 8 + headerLen > size) throw fail(`not a safetensors file (header length ${headerLen} for a file of ${size} bytes)`);
  const json = Buffer.alloc(headerLen);
  readSync(fd, json, 0, headerLen, 8);
  let header: Record<string, { dtype?: string; shape?: number[]; data_offsets?: [number, number] }>;
  try {
    header = JSON.parse(json.toString("utf8"));
  } catch {
    throw fail("not a safetensors file (its header is not JSON)");
  }
  const base = 8 + headerLen;
  const out: SafeTensor[] = [];
  for (const [name, t] of Object.entries(header)) {
    if (name === "__metadata__") continue;
    const { dtype, shape, data_offsets: off } = t ?? {};
    if (typeof dtype !== "string" || !Array.isArray(shape) || !Array.isArray(off) || off.length !== 2) throw fail(`tensor ${name} has no dtype, shape or data_offsets`);
    const per = ELEMENT_BYTES[dtype];
    if (per === undefined) throw fail(`tensor ${name} is ${dtype}; kiln imports F32, F16 and BF16 safetensors (quantized checkpoints such as GPTQ, AWQ or FP8 are not taken)`);
    const elements = shape.reduce((a, b) => a * b, 1);
    const [from, to] = off;
    if (to - from !== elements * per) throw fail(`tensor ${name}: data_offsets span ${to - from} bytes, its shape needs ${elements * per}`);
    if (base + to > size) throw fail(`tensor ${name} runs past the end of the file (truncated: ${size} bytes, needs ${base + to})`);
    out.push({ name, dtype, shape, fd, at: base + from, bytes: to - from });
  }
  return out;
}

/** Every tensor of a Hugging Face folder by name, over one or several shards; close() releases the files. */
export class SafetensorsFolder {
  readonly tensors = new Map<string, SafeTensor>();
  private readonly fds: number[] = [];

  constructor(readonly dir: string) {
    const index = join(dir, "model.safetensors.index.json");
    let shards: string[];
    if (existsSync(index)) {
      const map = (JSON.parse(readFileSync(index, "utf8")) as { weight_map?: Record<string, string> }).weight_map;
      if (!map || typeof map !== "object") throw new Error(`${index} has no weight_map`);
      shards = [...new Set(Object.values(map))];
    } else if (existsSync(join(dir, "model.safetensors"))) {
      shards = ["model.safetensors"];
    } else {
      throw new Error(`${dir} has neither model.safetensors nor model.safetensors.index.json`);
    }
    try {
      for (const shard of shards) {
        const path = join(dir, shard);
        if (!existsSync(path)) throw new Error(`${dir}: shard ${shard} named by the index is missing`);
        const fd = openSync(path, "r");
        this.fds.push(fd);
        for (const t of readSafetensorsHeader(path, fd)) this.tensors.set(t.name, t);
      }
    } catch (e) {
      this.close();
      throw e;
    }
  }

  get(name: string): SafeTensor {
    const t = this.tensors.get(name);
    if (!t) throw new Error(`${this.dir}: tensor ${name} is missing`);
    return t;
  }

  /** Rows [row, row + rows) of a tensor (the first axis), as float32. */
  rows(name: string, row: number, rows: number): Float32Array {
    const t = this.get(name);
    const cols = t.shape.slice(1).reduce((a, b) => a * b, 1);
    const per = ELEMENT_BYTES[t.dtype]!;
    const buf = Buffer.alloc(rows * cols * per);
    const got = readSync(t.fd, buf, 0, buf.length, t.at + row * cols * per);
    if (got !== buf.length) throw new Error(`${this.dir}: tensor ${name} could not be read (${got} of ${buf.length} bytes)`);
    return toFloat32(t.dtype, buf);
  }

  /** The whole tensor as float32. */
  all(name: string): Float32Array {
    const t = this.get(name);
    return this.rows(name, 0, t.shape[0] ?? 1);
  }

  close(): void {
    for (const fd of this.fds.splice(0)) closeSync(fd);
  }
}

/** safetensors' float dtypes as the ggml types whose codecs read them (the same little-endian layouts). */
const GGML_OF: Record<string, number> = { F32: GGML_TYPE.F32, F16: GGML_TYPE.F16, BF16: GGML_TYPE.BF16 };

/** Little-endian F32, F16 or BF16 bytes as float32 values. */
export function toFloat32(dtype: string, buf: Uint8Array): Float32Array {
  return decodeTensor(GGML_OF[dtype]!, buf, buf.byteLength / ELEMENT_BYTES[dtype]!);
}
