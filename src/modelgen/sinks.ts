// Per-dtype weight writers: receive each generated tensor (in row chunks) and emit the graph's initializers for it.
import { bytesOf, DataFile } from "./data-file.ts";
import { Q4_BLOCK } from "./graph-ops.ts";
import { GraphBuilder, T } from "./onnx-builder.ts";
import { q4Layout, quantizeInt8Rows, quantizeQ4Rows, transpose } from "./quantize.ts";
import { float16Bits, toFloat16 } from "./float16.ts";
import { FP16_HEAD, isGpuDtype } from "./gpu-decoder-graph.ts";
import type { Dtype } from "./spec.ts";
import type { Chunk, PlanEntry } from "./weights.ts";
import { embedRowsName, embedScaleName } from "./decoder-graph.ts";

/** Rows of `cols` values as int8 with a scale each (max|row| / 127, levels rounded to nearest), the scales written into `scales`. */
export function int8Rows(x: Float32Array, rows: number, cols: number, scales: Float32Array): Int8Array {
  const out = new Int8Array(rows * cols);
  for (let r = 0; r < rows; r++) {
    let amax = 0;
    for (let i = 0; i < cols; i++) amax = Math.max(amax, Math.abs(x[r * cols + i]!));
    const scale = amax > 0 ? Math.fround(amax / 127) : 1;
    scales[r] = scale;
    for (let i = 0; i < cols; i++) out[r * cols + i] = Math.max(-127, Math.min(127, Math.round(x[r * cols + i]! / scale)));
  }
  return out;
}

/** Tensors smaller than this stay inside the graph file (norm weights, small biases). */
const INLINE_BELOW = 4096;

/** Quantized output projection, filled chunk by chunk and written once the whole matrix is done. */
interface PendingHead {
  name: string;
  n: number;
  k: number;
  q4?: { q: Uint8Array; scales: Float32Array };
  int8?: { qT: Int8Array; scales: Float32Array };
  /** fp16: the head transposed to MatMul's [in, out], filled column by column as the rows arrive. */
  f16T?: Uint16Array;
}

export class WeightSink {
  private pending: PendingHead | null = null;

  constructor(
    readonly dtype: Dtype,
    readonly graph: GraphBuilder,
    readonly data: DataFile,
    readonly dataLocation: string,
    /** With tied embeddings the embedding rows also feed the quantized head. */
    readonly tied: boolean,
    /** The embedding table goes out as int8 rows and a scale per row (decoder-graph.ts int8EmbeddingRows). */
    readonly int8Embedding = false,
  ) {}

  /** Per-row scales of the int8 embedding table, filled as its rows arrive. */
  private embedScales: Float32Array | null = null;

  /** The GPU formats store every float tensor (weights, norms, biases, embedding rows) as fp16. */
  private get half(): boolean {
    return isGpuDtype(this.dtype);
  }

  private floatBytes(values: Float32Array): Uint8Array {
    return this.half ? bytesOf(toFloat16(values)) : bytesOf(values);
  }

  private raw(name: string, dims: number[], values: Float32Array): void {
    const bytes = this.floatBytes(values);
    const type = this.half ? T.FLOAT16 : T.FLOAT;
    if (bytes.length < INLINE_BELOW) this.graph.inline(name, type, dims, bytes.slice());
    else this.graph.external(this.data.tensor(name, type, dims, bytes), this.dataLocation);
  }

  begin(e: PlanEntry): void {
    const rawStreamed = e.kind === "embed" || (e.kind === "head" && this.dtype === "fp32");
    if (rawStreamed) this.data.begin();
    if (e.kind === "embed" && this.int8Embedding) this.embedScales = new Float32Array(e.rows);
    const separateHead = this.dtype !== "fp32" && (e.kind === "head" || (e.kind === "embed" && this.tied));
    if (separateHead) {
      const n = e.rows, k = e.cols;
      if (this.dtype === "fp16") {
        this.pending = { name: FP16_HEAD, n, k, f16T: new Uint16Array(n * k) };
      } else if (this.dtype === "q4" || this.dtype === "q4f16") {
        const l = q4Layout(n, k, Q4_BLOCK);
        this.pending = { name: e.name, n, k, q4: { q: new Uint8Array(l.qBytes), scales: new Float32Array(l.scaleCount) } };
      } else {
        this.pending = { name: e.name, n, k, int8: { qT: new Int8Array(n * k), scales: new Float32Array(n) } };
      }
    }
  }

  chunk(e: PlanEntry, c: Chunk): void {
    if (e.kind === "norm" || e.kind === "bias") return this.raw(e.name, [e.cols], c.data);
    if (e.kind === "tensor") return this.raw(e.name, e.dims ?? [e.rows, e.cols], c.data);
    if (e.kind === "linear") return this.linear(e, c.data);
    // Embedding (raw for Gather, or int8 rows) and/or head rows.
    if (e.kind === "embed" && this.embedScales) this.data.append(bytesOf(int8Rows(c.data, c.rows, e.cols, this.embedScales.subarray(c.rowStart, c.rowStart + c.rows))));
    else if (e.kind === "embed" || this.dtype === "fp32") this.data.append(this.floatBytes(c.data));
    const p = this.pending;
    if (!p) return;
    if (p.f16T) {
      for (let r = 0; r < c.rows; r++) for (let i = 0; i < p.k; i++) p.f16T[i * p.n + c.rowStart + r] = float16Bits(c.data[r * p.k + i]!);
    } else if (p.q4) {
      const l = q4Layout(c.rowStart, p.k, Q4_BLOCK);
      quantizeQ4Rows(c.data, c.rows, p.k, p.q4.q.subarray(l.qBytes), p.q4.scales.subarray(l.scaleCount), Q4_BLOCK);
    } else if (p.int8) {
      quantizeInt8Rows(c.data, c.rows, p.k, p.n, c.rowStart, p.int8.qT, p.int8.scales);
    }
  }

  end(e: PlanEntry): void {
    const streamedRaw = e.kind === "embed" || (e.kind === "head" && this.dtype === "fp32");
    if (e.kind === "embed" && this.embedScales) {
      this.graph.external(this.data.end(embedRowsName(e.name), T.INT8, [e.rows, e.cols]), this.dataLocation);
      this.graph.external(this.data.tensor(embedScaleName(e.name), T.FLOAT, [e.rows], bytesOf(this.embedScales)), this.dataLocation);
      this.embedScales = null;
    } else if (streamedRaw) this.graph.external(this.data.end(e.name, this.half ? T.FLOAT16 : T.FLOAT, [e.rows, e.cols]), this.dataLocation);
    const p = this.pending;
    if (!p) return;
    this.pending = null;
    this.writeQuantized(p.name, p.n, p.k, p);
  }

  private linear(e: PlanEntry, w: Float32Array): void {
    const n = e.rows, k = e.cols;
    if (this.dtype === "fp32" || this.dtype === "fp16") {
      // MatMul wants [in, out].
      this.raw(e.name, [k, n], transpose(w, n, k));
      return;
    }
    if (this.dtype === "q4" || this.dtype === "q4f16") {
      const l = q4Layout(n, k, Q4_BLOCK);
      const q4 = { q: new Uint8Array(l.qBytes), scales: new Float32Array(l.scaleCount) };
      quantizeQ4Rows(w, n, k, q4.q, q4.scales, Q4_BLOCK);
      this.writeQuantized(e.name, n, k, { q4 });
    } else {
      const int8 = { qT: new Int8Array(n * k), scales: new Float32Array(n) };
      quantizeInt8Rows(w, n, k, n, 0, int8.qT, int8.scales);
      this.writeQuantized(e.name, n, k, { int8 });
    }
  }

  private writeQuantized(name: string, n: number, k: number, p: Pick<PendingHead, "q4" | "int8" | "f16T">): void {
    const ext = (suffix: string, type: number, dims: number[], bytes: Uint8Array) =>
      this.graph.external(this.data.tensor(`${name}${suffix}`, type, dims, bytes), this.dataLocation);
    if (p.f16T) {
      ext("", T.FLOAT16, [k, n], bytesOf(p.f16T));
    } else if (p.q4) {
      const l = q4Layout(n, k, Q4_BLOCK);
      ext("_Q4", T.UINT8, [n, l.blocks, Q4_BLOCK / 2], p.q4.q);
      // q4f16: the same levels; only the scales are rounded to fp16 (MatMulNBits wants them in the activations' type).
      ext("_scales", this.half ? T.FLOAT16 : T.FLOAT, [l.scaleCount], this.floatBytes(p.q4.scales));
    } else if (p.int8) {
      ext("_int8", T.INT8, [k, n], bytesOf(p.int8.qT));
      ext("_scale", T.FLOAT, [n], bytesOf(p.int8.scales));
    }
  }
}
