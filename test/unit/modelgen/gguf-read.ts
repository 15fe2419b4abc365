// A small GGUF v3 reader for tests: the header, metadata and tensor infos, read independently of kiln's writer.
import { readFileSync } from "node:fs";

export interface ReadTensor {
  name: string;
  dims: number[];
  type: number;
  /** Absolute byte offset of the tensor's data in the file. */
  at: number;
}

export interface ReadGguf {
  version: number;
  kv: Map<string, unknown>;
  tensors: ReadTensor[];
  bytes: Uint8Array;
}

export function readGguf(path: string): ReadGguf {
  const bytes = new Uint8Array(readFileSync(path));
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const dec = new TextDecoder();
  let p = 0;
  const u32 = () => ((p += 4), view.getUint32(p - 4, true));
  const u64 = () => ((p += 8), Number(view.getBigUint64(p - 8, true)));
  const str = () => {
    const n = u64();
    p += n;
    return dec.decode(bytes.subarray(p - n, p));
  };
  const value = (type: number): unknown => {
    switch (type) {
      case 4: return u32();
      case 5: return (p += 4), view.getInt32(p - 4, true);
      case 6: return (p += 4), view.getFloat32(p - 4, true);
      case 7: return (p += 1), bytes[p - 1] !== 0;
      case 8: return str();
      case 10: return u64();
      case 9: {
        const elem = u32();
        return Array.from({ length: u64() }, () => value(elem));
      }
      default: throw new Error(`gguf reader: value type ${type} not handled`);
    }
  };
  if (u32() !== 0x46554747) throw new Error("not a GGUF file");
  const version = u32();
  const nTensors = u64();
  const nKv = u64();
  const kv = new Map<string, unknown>();
  for (let i = 0; i < nKv; i++) {
    const key = str();
    kv.set(key, value(u32()));
  }
  const infos = Array.from({ length: nTensors }, () => {
    const name = str();
    const dims = Array.from({ length: u32() }, () => u64());
    return { name, dims, type: u32(), offset: u64() };
  });
  const alignment = (kv.get("general.alignment") as number | undefined) ?? 32;
  const dataStart = Math.ceil(p / alignment) * alignment;
  return { version, kv, tensors: infos.map((t) => ({ name: t.name, dims: t.dims, type: t.type, at: dataStart + t.offset })), bytes };
}
