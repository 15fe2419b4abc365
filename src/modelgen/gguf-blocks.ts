// ggml's tensor types as GGUF stores them: ids, names and block sizes, and one entry point to encode or decode each
// (F32, F16, BF16, the 32-element legacy blocks in ggml-legacy.ts and IQ4_NL, the 256-element K-quants in ggml-kquants*.ts).
import { decodeBf16, decodeF16, encodeBf16, encodeF16 } from "./ggml-half.ts";
import { decodeIQ4_NL, encodeIQ4_NL, IQ4_NL_BLOCK_BYTES } from "./ggml-iq4nl.ts";
import { decodeQ2_K, decodeQ3_K, decodeQ4_K, decodeQ5_K, decodeQ6_K, Q2_K_BLOCK_BYTES, Q3_K_BLOCK_BYTES, Q4_K_BLOCK_BYTES, Q5_K_BLOCK_BYTES, Q6_K_BLOCK_BYTES, QK_K } from "./ggml-kquants.ts";
import { encodeQ2_K, encodeQ3_K, encodeQ4_K, encodeQ5_K, encodeQ6_K } from "./ggml-kquants-encode.ts";
import { decodeQ4_0, decodeQ4_1, decodeQ5_0, decodeQ5_1, decodeQ8_0, encodeQ4_0, encodeQ4_1, encodeQ5_0, encodeQ5_1, encodeQ8_0, Q4_0_BLOCK_BYTES, Q4_1_BLOCK_BYTES, Q5_0_BLOCK_BYTES, Q5_1_BLOCK_BYTES, Q8_0_BLOCK_BYTES, QK } from "./ggml-legacy.ts";

export { f16ToF32, f32ToF16 } from "./ggml-half.ts";
export { encodeQ4_0, encodeQ8_0 } from "./ggml-legacy.ts";

/** ggml type ids (enum ggml_type) that kiln reads and writes, as stored in a GGUF tensor info. */
export const GGML_TYPE = {
  F32: 0, F16: 1, Q4_0: 2, Q4_1: 3, Q5_0: 6, Q5_1: 7, Q8_0: 8, Q2_K: 10, Q3_K: 11, Q4_K: 12, Q5_K: 13, Q6_K: 14, IQ4_NL: 20, BF16: 30,
} as const;
export type GgmlType = (typeof GGML_TYPE)[keyof typeof GGML_TYPE];

/** Names of the ggml types kiln does not handle, so an import can say which one a file carries. */
const OTHER_TYPES: Record<number, string> = {
  9: "Q8_1", 15: "Q8_K", 16: "IQ2_XXS", 17: "IQ2_XS", 18: "IQ3_XXS", 19: "IQ1_S", 21: "IQ3_S", 22: "IQ2_S",
  23: "IQ4_XS", 24: "I8", 25: "I16", 26: "I32", 27: "I64", 28: "F64", 29: "IQ1_M", 34: "TQ1_0", 35: "TQ2_0", 39: "MXFP4",
};

interface Codec {
  /** Elements per block and bytes per block. */
  block: number;
  bytes: number;
  encode: (x: Float32Array) => Uint8Array;
  decode: (bytes: Uint8Array, n: number, y: Float32Array) => void;
}

const CODECS: Record<GgmlType, Codec> = {
  [GGML_TYPE.F32]: {
    block: 1, bytes: 4,
    encode: (x) => new Uint8Array(x.buffer, x.byteOffset, x.byteLength),
    // A copy, byte-wise: the source need not be 4-byte aligned.
    decode: (b, n, y) => new Uint8Array(y.buffer, y.byteOffset, n * 4).set(b.subarray(0, n * 4)),
  },
  [GGML_TYPE.F16]: { block: 1, bytes: 2, encode: encodeF16, decode: decodeF16 },
  [GGML_TYPE.BF16]: { block: 1, bytes: 2, encode: encodeBf16, decode: decodeBf16 },
  [GGML_TYPE.Q4_0]: { block: QK, bytes: Q4_0_BLOCK_BYTES, encode: encodeQ4_0, decode: decodeQ4_0 },
  [GGML_TYPE.Q4_1]: { block: QK, bytes: Q4_1_BLOCK_BYTES, encode: encodeQ4_1, decode: decodeQ4_1 },
  [GGML_TYPE.Q5_0]: { block: QK, bytes: Q5_0_BLOCK_BYTES, encode: encodeQ5_0, decode: decodeQ5_0 },
  [GGML_TYPE.Q5_1]: { block: QK, bytes: Q5_1_BLOCK_BYTES, encode: encodeQ5_1, decode: decodeQ5_1 },
  [GGML_TYPE.Q8_0]: { block: QK, bytes: Q8_0_BLOCK_BYTES, encode: encodeQ8_0, decode: decodeQ8_0 },
  [GGML_TYPE.IQ4_NL]: { block: QK, bytes: IQ4_NL_BLOCK_BYTES, encode: encodeIQ4_NL, decode: decodeIQ4_NL },
  [GGML_TYPE.Q2_K]: { block: QK_K, bytes: Q2_K_BLOCK_BYTES, encode: encodeQ2_K, decode: decodeQ2_K },
  [GGML_TYPE.Q3_K]: { block: QK_K, bytes: Q3_K_BLOCK_BYTES, encode: encodeQ3_K, decode: decodeQ3_K },
  [GGML_TYPE.Q4_K]: { block: QK_K, bytes: Q4_K_BLOCK_BYTES, encode: encodeQ4_K, decode: decodeQ4_K },
  [GGML_TYPE.Q5_K]: { block: QK_K, bytes: Q5_K_BLOCK_BYTES, encode: encodeQ5_K, decode: decodeQ5_K },
  [GGML_TYPE.Q6_K]: { block: QK_K, bytes: Q6_K_BLOCK_BYTES, encode: encodeQ6_K, decode: decodeQ6_K },
};

/** llama.cpp's name for ggml type `type` ("Q4_K", "IQ4_NL"), or "type N" for an id it never had. */
export function ggmlTypeName(type: number): string {
  const known = Object.entries(GGML_TYPE).find(([, id]) => id === type)?.[0];
  return known ?? OTHER_TYPES[type] ?? `type ${type}`;
}

function isGgmlType(type: number): type is GgmlType {
  return Object.hasOwn(CODECS, type);
}

function codec(type: number): Codec {
  if (!isGgmlType(type)) throw new Error(`ggml type ${ggmlTypeName(type)} (id ${type}) is not one kiln can read or write`);
  return CODECS[type];
}

/** Elements per block of `type` (1 for F32, F16, BF16; 32 for Q4_0 … Q8_0; 256 for the K-quants). */
export function ggmlBlockSize(type: number): number {
  return codec(type).block;
}

/** Bytes that `elements` values take in `type` (quantized types need whole blocks). */
export function ggmlBytes(type: number, elements: number): number {
  const c = codec(type);
  if (elements % c.block !== 0) throw new Error(`ggml type ${ggmlTypeName(type)}: ${elements} elements are not whole ${c.block}-element blocks`);
  return (elements / c.block) * c.bytes;
}

/** Encodes `x` (whole blocks: rows whose length is a multiple of the type's block size) as `type`. */
export function encodeTensor(type: number, x: Float32Array): Uint8Array {
  ggmlBytes(type, x.length);
  return codec(type).encode(x);
}

/** The values of the first `elements` elements stored as `type` in `bytes` (whole blocks; any byte offset). */
export function decodeTensor(type: number, bytes: Uint8Array, elements: number): Float32Array {
  const need = ggmlBytes(type, elements);
  if (bytes.length < need) throw new Error(`ggml type ${ggmlTypeName(type)}: ${elements} elements need ${need} bytes, got ${bytes.length}`);
  const out = new Float32Array(elements);
  codec(type).decode(bytes, elements, out);
  return out;
}
