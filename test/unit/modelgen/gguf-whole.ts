// A small GGUF file read whole for tests (kiln's reader for the header, the bytes in memory, offsets as `at`).
import { readFileSync } from "node:fs";
import { GgufFile, type GgufValue } from "../../../src/modelgen/gguf-read.ts";

export interface WholeGguf {
  version: number;
  kv: Map<string, GgufValue>;
  tensors: { name: string; dims: number[]; type: number; at: number }[];
  bytes: Uint8Array;
}

export function readGguf(path: string): WholeGguf {
  const f = GgufFile.open(path);
  f.close();
  return { version: f.version, kv: f.kv, tensors: f.tensors.map((t) => ({ name: t.name, dims: t.dims, type: t.type, at: t.offset })), bytes: new Uint8Array(readFileSync(path)) };
}
