// Weight quantizers: 4-bit blockwise with zero points in MatMulNBits layout, and per-column symmetric int8.

export const Q4_BLOB = 16; // bytes per block of 32 four-bit values

export interface Q4Layout {
  blocks: number;
  qBytes: number;
  scaleCount: number;
  zpBytes: number;
}

/** Sizes of the three MatMulNBits tensors for an [N, K] weight (N output rows, K inputs) with 32-value blocks. */
export function q4Layout(n: number, k: number, block = 32): Q4Layout {
  const blocks = Math.ceil(k / block);
  return { blocks, qBytes: n * blocks * (block / 2), scaleCount: n * blocks, zpBytes: n * Math.ceil(blocks / 2) };
}

/**
 * Quantizes `rows` rows of length `k` (row-major) into MatMulNBits layout, written from row 0 of the given views:
 * q[row][block][16] (element 2j in the low nibble of byte j, 2j+1 in the high one), scales[row·blocks + block],
 * zero points two per byte (even block in the low nibble). Each block is asymmetric over [min(0, lo), max(0, hi)],
 * so zero stays exactly representable; values past k (a partial last block) quantize to the zero point.
 */
export function quantizeQ4Rows(w: Float32Array, rows: number, k: number, q: Uint8Array, scales: Float32Array, zp: Uint8Array, block = 32): void {
  const blocks = Math.ceil(k / block);
  const zpRow = Math.ceil(blocks / 2);
  const levels = new Uint8Array(block);
  for (let r = 0; r < rows; r++) {
    const base = r * k;
    for (let b = 0; b < blocks; b++) {
      const start = b * block;
      const end = Math.min(start + block, k);
      let lo = 0, hi = 0;
      for (let i = start; i < end; i++) {
        const v = w[base + i]!;
        if (v < lo) lo = v;
        if (v > hi) hi = v;
      }
      const scale = hi > lo ? Math.fround((hi - lo) / 15) : 1;
      const z = Math.min(15, Math.max(0, Math.round(-lo / scale)));
      const inv = 1 / scale;
      for (let i = 0; i < block; i++) {
        const idx = start + i;
        levels[i] = idx < end ? Math.min(15, Math.max(0, Math.round(w[base + idx]! * inv) + z)) : z;
      }
      const qBase = (r * blocks + b) * (block / 2);
      for (let j = 0; j < block / 2; j++) q[qBase + j] = levels[2 * j]! | (levels[2 * j + 1]! << 4);
      scales[r * blocks + b] = scale;
      const zi = r * zpRow + (b >> 1);
      zp[zi] = b & 1 ? (zp[zi]! & 0x0f) | (z << 4) : (zp[zi]! & 0xf0) | z;
    }
  }
}

/** The inverse of quantizeQ4Rows, as MatMulNBits computes it: (level − zero point) · scale. */
export function dequantizeQ4(n: number, k: number, q: Uint8Array, scales: Float32Array, zp: Uint8Array, block = 32): Float32Array {
  const blocks = Math.ceil(k / block);
  const zpRow = Math.ceil(blocks / 2);
  const out = new Float32Array(n * k);
  for (let r = 0; r < n; r++) {
    for (let i = 0; i < k; i++) {
      const b = Math.floor(i / block);
      const within = i % block;
      const byte = q[(r * blocks + b) * (block / 2) + (within >> 1)]!;
      const level = within & 1 ? byte >> 4 : byte & 0x0f;
      const zByte = zp[r * zpRow + (b >> 1)]!;
      const z = b & 1 ? zByte >> 4 : zByte & 0x0f;
      out[r * k + i] = (level - z) * scales[r * blocks + b]!;
    }
  }
  return out;
}

/**
 * Largest |level| of kiln's int8 weights: 7 bits, not 8. ONNX Runtime's u8×s8 kernels on CPUs without VNNI (AVX2's
 * vpmaddubsw) add each pair of u8·s8 products in a saturating int16: 2·255·127 = 64,770 overflows it, 2·255·63 =
 * 32,130 does not. 7-bit weights are therefore exact on every x86-64 CPU, at the cost of one bit of weight precision.
 */
export const INT8_MAX_LEVEL = 63;

/**
 * Symmetric int8 for DynamicQuantizeMatMul: rows `rowStart…` of an [N, K] weight go to columns of the transposed
 * [K, N] int8 matrix `qT`, one scale per output column (max |w| / INT8_MAX_LEVEL), levels in ±INT8_MAX_LEVEL.
 */
export function quantizeInt8Rows(w: Float32Array, rows: number, k: number, n: number, rowStart: number, qT: Int8Array, scales: Float32Array): void {
  for (let r = 0; r < rows; r++) {
    let amax = 0;
    for (let i = 0; i < k; i++) amax = Math.max(amax, Math.abs(w[r * k + i]!));
    const scale = amax > 0 ? Math.fround(amax / INT8_MAX_LEVEL) : 1;
    const col = rowStart + r;
    scales[col] = scale;
    for (let i = 0; i < k; i++) qT[i * n + col] = Math.max(-INT8_MAX_LEVEL, Math.min(INT8_MAX_LEVEL, Math.round(w[r * k + i]! / scale)));
  }
}

/** [rows, cols] row-major → [cols, rows]. */
export function transpose(w: Float32Array, rows: number, cols: number): Float32Array {
  const out = new Float32Array(rows * cols);
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) out[c * rows + r] = w[r * cols + c]!;
  return out;
}
