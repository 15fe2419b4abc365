// Seeded weights of one diffusion graph, generated as the graph is built and written straight to its data file (small ones inline).
import { bytesOf, type DataFile } from "../data-file.ts";
import { GraphBuilder, T } from "../onnx-builder.ts";
import { transpose } from "../quantize.ts";
import { tensorRng } from "../rng.ts";

/** Tensors smaller than this stay inside the graph file (norm weights, biases, small kernels). */
const INLINE_BELOW = 4096;

/** Std of every bias: small, so the graph does not start perfectly symmetric. */
const BIAS_STD = 0.02;

export interface LinearParams {
  /** Stored [in, out], as MatMul takes it. */
  weight: string;
  bias?: string;
}

export interface ConvParams {
  weight: string;
  bias: string;
}

export interface NormParams {
  weight: string;
  bias: string;
}

/**
 * Hands out named initializers. Each tensor's values come from its own seeded stream (tensorRng(seed, name)), so
 * they do not depend on build order or on other tensors. Without a data file it only counts parameters (a dry run).
 */
export class ParamStore {
  /** Values generated so far. */
  count = 0;

  constructor(
    readonly g: GraphBuilder,
    readonly seed: number,
    readonly gain: number,
    readonly data: DataFile | null,
    readonly location: string,
    readonly onTensor?: (values: number, name: string) => void,
  ) {}

  private store(name: string, dims: number[], make: () => Float32Array): string {
    const size = dims.reduce((a, b) => a * b, 1);
    this.count += size;
    if (this.data) {
      const values = make();
      const bytes = bytesOf(values);
      if (bytes.length < INLINE_BELOW) this.g.inline(name, T.FLOAT, dims, bytes.slice());
      else this.g.external(this.data.tensor(name, T.FLOAT, dims, bytes), this.location);
    }
    this.onTensor?.(size, name);
    return name;
  }

  private normalValues(name: string, size: number, std: number): Float32Array {
    const out = new Float32Array(size);
    tensorRng(this.seed, name).fillNormal(out, std);
    return out;
  }

  /** A tensor of normal values with the given std. */
  normal(name: string, dims: number[], std: number): string {
    return this.store(name, dims, () => this.normalValues(name, dims.reduce((a, b) => a * b, 1), std));
  }

  filled(name: string, dims: number[], value: number): string {
    return this.store(name, dims, () => new Float32Array(dims.reduce((a, b) => a * b, 1)).fill(value));
  }

  /** y = x·W (+ b): generated in Hugging Face's [out, in] layout under `<prefix>.weight`, stored transposed. */
  linear(prefix: string, inputs: number, outputs: number, bias = true): LinearParams {
    const name = `${prefix}.weight`;
    const weight = this.store(name, [inputs, outputs], () => transpose(this.normalValues(name, outputs * inputs, this.gain / Math.sqrt(inputs)), outputs, inputs));
    return { weight, ...(bias ? { bias: this.normal(`${prefix}.bias`, [outputs], BIAS_STD) } : {}) };
  }

  /** A square 2-D convolution kernel [out, in, k, k] and its bias. */
  conv(prefix: string, inputs: number, outputs: number, kernel: number): ConvParams {
    return {
      weight: this.normal(`${prefix}.weight`, [outputs, inputs, kernel, kernel], this.gain / Math.sqrt(inputs * kernel * kernel)),
      bias: this.normal(`${prefix}.bias`, [outputs], BIAS_STD),
    };
  }

  /** A norm's affine parameters at their usual start: scale 1, shift 0. */
  norm(prefix: string, channels: number): NormParams {
    return { weight: this.filled(`${prefix}.weight`, [channels], 1), bias: this.filled(`${prefix}.bias`, [channels], 0) };
  }
}
