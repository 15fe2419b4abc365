// Weight quantizers: 4-bit blockwise (symmetric, MatMulNBits layout without zero points) and per-column symmetric int8.

export const Q4_BLOB = 16; // bytes per block of 32 four-bit values

export interface Q4Layout {
  blocks: number;
  qBytes: number;
  scaleCount: number;
}

/** Sizes of MatMulNBits' two tensors (packed levels, scales) for an [N, K] weight (N output rows, K inputs). */
export function q4Layout(n: number, k: number, block = 32): Q4Layout {
  const blocks = Math.ceil(k / block);
  return { blocks, qBytes: n * blocks * (block / 2), scaleCount: n * blocks };
}

/**
 * Quantizes `rows` rows of length `k` (row-major) into MatMulNBits layout, written from row 0 of the given views:
 * q[row][block][16] (element 2j in the low nibble of byte j, 2j+1 in the high one) and scales[row·blocks + block].
 * Each block is symmetric, as ggml's Q4_0: m is its value of largest magnitude (sign kept) and d = m / −8, so m encodes
 * exactly as level 0 and x ≈ (level − 8) · d, MatMulNBits' default zero point. The error per value is at most |d|/2
 * (the top level 16 is clipped to 15, still within |d|). Values past k (a partial last block) get level 8, i.e. 0.
 * Without zero points MatMulNBits' int8 kernels ran 12–17% faster at one row on AVX2, and the format is llama.cpp's
 * Q4_0 with an f32 scale.
 */
export function quantizeQ4Rows(w: Float32Array, rows: number, k: number, q: Uint8Array, scales: Float32Array, block = 32): void {
  const blocks = Math.ceil(k / block);
  const levels = new Uint8Array(block);
  for (let r = 0; r < rows; r++) {
    const base = r * k;
    for (let b = 0; b < blocks; b++) {
      const start = b * block;
      const end = Math.min(start + block, k);
      let m = 0;
      for (let i = start; i < end; i++) if (Math.abs(w[base + i]!) > Math.abs(m)) m = w[base + i]!;
      const d = Math.fround(m / -8);
      const inv = d ? 1 / d : 0;
      for (let i = 0; i < block; i++) {
        const idx = start + i;
        levels[i] = idx < end ? Math.min(15, Math.max(0, Math.round(w[base + idx]! * inv) + 8)) : 8;
      }
      const qBase = (r * blocks + b) * (block / 2);
      for (let j = 0; j < block / 2; j++) q[qBase + j] = levels[2 * j]! | (levels[2 * j + 1]! << 4);
      scales[r * blocks + b] = d;
    }
  }
}

/** The inverse of quantizeQ4Rows, as MatMulNBits computes it: (level − 8) · scale. */
export function dequantizeQ4(n: number, k: number, q: Uint8Array, scales: Float32Array, block = 32): Float32Array {
  const blocks = Math.ceil(k / block);
  const out = new Float32Array(n * k);
  for (let r = 0; r < n; r++) {
    for (let i = 0; i < k; i++) {
      const b = Math.floor(i / block);
      const within = i % block;
      const byte = q[(r * blocks + b) * (block / 2) + (within >> 1)]!;
      const level = within & 1 ? byte >> 4 : byte & 0x0f;
      out[r * k + i] = (level - 8) * scales[r * blocks + b]!;
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
