// Drives a built image folder's four graphs through onnxruntime-node: sessions, seeded inputs, and the checks the graph tests share.
import { join } from "node:path";
import { expect } from "bun:test";
import * as ort from "onnxruntime-node";
import { Rng } from "../../../src/modelgen/rng.ts";

export type Graph = "text_encoder" | "unet" | "vae_decoder" | "vae_encoder";
export type Sessions = Record<Graph, ort.InferenceSession>;

export async function openImageModel(dir: string): Promise<Sessions> {
  const graphs: Graph[] = ["text_encoder", "unet", "vae_decoder", "vae_encoder"];
  const sessions = await Promise.all(graphs.map((g) => ort.InferenceSession.create(join(dir, g, "model.onnx"), { intraOpNumThreads: 1 })));
  return Object.fromEntries(graphs.map((g, i) => [g, sessions[i]!])) as Sessions;
}

/** A float32 tensor of seeded normal values (std 1 unless given). */
export function noise(dims: number[], seed: number, std = 1): ort.Tensor {
  const data = new Float32Array(dims.reduce((a, b) => a * b, 1));
  new Rng(seed).fillNormal(data, std);
  return new ort.Tensor("float32", data, dims);
}

export function int64(values: number[], dims = [values.length]): ort.Tensor {
  return new ort.Tensor("int64", BigInt64Array.from(values.map(BigInt)), dims);
}

/** CLIP-style prompt rows: start token, the given ids, then end tokens up to `length`. */
export function promptIds(rows: number[][], length: number, vocab: number): ort.Tensor {
  const start = vocab - 2, end = vocab - 1;
  const flat = rows.flatMap((r) => [start, ...r, ...new Array(length - 1 - r.length).fill(end)]);
  return int64(flat, [rows.length, length]);
}

/** Declared inputs or outputs as [name, type, shape] rows. */
export function declared(meta: readonly ort.InferenceSession.ValueMetadata[]): unknown[][] {
  return meta.map((m) => (m.isTensor ? [m.name, m.type, [...m.shape]] : [m.name, "non-tensor", []]));
}

/** Asserts a float32 output of the given shape with only finite values below `bound` in magnitude; returns its data. */
export function checkOutput(t: ort.Tensor | undefined, dims: number[], bound = 100): Float32Array {
  expect(t).toBeDefined();
  expect(t!.type).toBe("float32");
  expect([...t!.dims]).toEqual(dims);
  const data = t!.data as Float32Array;
  let worst = 0;
  for (const v of data) {
    if (!Number.isFinite(v)) throw new Error(`non-finite output value ${v}`);
    worst = Math.max(worst, Math.abs(v));
  }
  expect(worst).toBeLessThan(bound);
  return data;
}

export function maxAbsDiff(a: Float32Array, b: Float32Array): number {
  expect(a.length).toBe(b.length);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]! - b[i]!));
  return m;
}

export function std(a: Float32Array): number {
  let s = 0, s2 = 0;
  for (const v of a) (s += v), (s2 += v * v);
  const m = s / a.length;
  return Math.sqrt(s2 / a.length - m * m);
}

/** Row `b` of a batch-major tensor's data. */
export function row(t: ort.Tensor, b: number): Float32Array {
  const size = t.dims.slice(1).reduce((x, y) => x * y, 1);
  return (t.data as Float32Array).slice(b * size, (b + 1) * size);
}

/** A tensor holding one row of another (batch 1). */
export function rowTensor(t: ort.Tensor, b: number): ort.Tensor {
  return new ort.Tensor("float32", row(t, b), [1, ...t.dims.slice(1)]);
}
