// Runs UNet rows (each its own latents, timestep and text embedding) through the unet session, converting at the
// boundary to whatever element types the graph declares.
import type { GraphSession, UnetIO } from "./graph-io.ts";
import { runInChunks, stack, unstack } from "./graph-batch.ts";
import { floatsOf, floatTensor, timestepTensor, type TimestepType } from "./ort-values.ts";
import { toHalfBits, halfToFloat } from "./half.ts";
import type { LatentShape } from "./denoiser.ts";

/** A text encoder's output for one prompt: [seqLen, hidden]. */
export interface Embedding {
  data: Float32Array;
  seqLen: number;
  hidden: number;
}

export interface UnetRow {
  /** The model input x/√(σ² + 1), [channels, height, width]. */
  sample: Float32Array;
  timestep: number;
  hidden: Embedding;
}

/** The timestep value the graph actually sees: truncated for integer graphs, rounded to its float type otherwise. */
export function fedTimestep(t: number, type: TimestepType): number {
  if (type === "int64" || type === "int32") return Math.trunc(t);
  if (type === "float16") return halfToFloat(Uint16Array.of(toHalfBits(t)))[0]!;
  return Math.fround(t);
}

export class UnetRunner {
  constructor(
    readonly session: GraphSession,
    readonly io: UnetIO,
  ) {}

  /** Most rows one pass should take, given the worker's limit and the graph's fixed batch. */
  passRows(maxBatch: number): number {
    return Math.max(1, this.io.batch === null ? maxBatch : Math.min(maxBatch, this.io.batch));
  }

  /** Why the graph cannot run latents of this shape, or null when it can. */
  shapeProblem(shape: LatentShape): string | null {
    const { channels, height, width } = this.io;
    if (channels !== null && channels !== shape.channels) return `the UNet takes ${channels} latent channels, the VAE makes ${shape.channels}`;
    if ((height !== null && height !== shape.height) || (width !== null && width !== shape.width)) {
      return `the UNet only runs ${width ?? shape.width}×${height ?? shape.height} latents (asked for ${shape.width}×${shape.height})`;
    }
    return null;
  }

  /** One output ([channels, height, width]) per row, in order. Rows of a "shared"-timestep graph must share it. */
  run(rows: UnetRow[], shape: LatentShape): Promise<Float32Array[]> {
    return runInChunks(rows, this.io.batch, (chunk) => this.runChunk(chunk, shape));
  }

  private async runChunk(rows: UnetRow[], shape: LatentShape): Promise<Float32Array[]> {
    const { io } = this;
    const n = rows.length;
    const fed = rows.map((r) => fedTimestep(r.timestep, io.timestepType));
    if (io.timestep === "shared" && fed.some((t) => t !== fed[0])) throw new Error("rows of one pass must share the timestep on this UNet");
    const { seqLen, hidden } = rows[0]!.hidden;
    if (rows.some((r) => r.hidden.seqLen !== seqLen || r.hidden.hidden !== hidden)) throw new Error("rows of one pass differ in text length");
    const tValues = io.timestep === "shared" ? [rows[0]!.timestep] : rows.map((r) => r.timestep);
    const feeds = {
      sample: floatTensor(stack(rows.map((r) => r.sample)), io.sampleType, [n, shape.channels, shape.height, shape.width]),
      timestep: timestepTensor(tValues, io.timestepType, io.timestepScalar ? [] : [tValues.length]),
      encoder_hidden_states: floatTensor(stack(rows.map((r) => r.hidden.data)), io.hiddenType, [n, seqLen, hidden]),
    };
    const out = await this.session.run(feeds, ["out_sample"]);
    const value = out.out_sample;
    if (!value) throw new Error("unet returned no out_sample");
    const data = floatsOf(value);
    if (data.length !== n * shape.channels * shape.height * shape.width) throw new Error(`unet's out_sample has dims [${value.dims.join(", ")}]`);
    return unstack(data, n);
  }
}
