// Tensors in and out of the diffusion sessions: float32 or float16 at the graph's choice, int64 or float timesteps.
import * as ort from "onnxruntime-node";
import type { OrtValue } from "../text/ort-runner.ts";
import { floatToHalf, halfToFloat } from "./half.ts";

export type FloatType = "float32" | "float16";
export type TimestepType = "int64" | "int32" | "float32" | "float16";
export type IdsType = "int64" | "int32";

type Data = Float32Array | Uint16Array | BigInt64Array | Int32Array;

/**
 * A tensor of the onnxruntime-node build the sessions were made with. onnxruntime-common turns a float16 Uint16Array
 * into a Float16Array where one exists (Bun has it), and the native binding under Bun then reads it as empty ("not
 * enough space: expected 8, got 0"): the raw words are put back so the binding sees a Uint16Array.
 */
export function tensor(type: string, data: Data, dims: number[]): ort.Tensor {
  const t = new ort.Tensor(type as "float32", data as Float32Array, dims);
  if (type === "float16" && !(t.data instanceof Uint16Array)) (t as unknown as { cpuData: Data }).cpuData = data;
  return t;
}

/** float32 values as the graph's float input (float16 words when it takes halves). */
export function floatTensor(values: Float32Array, type: FloatType, dims: number[]): ort.Tensor {
  return tensor(type, type === "float16" ? floatToHalf(values) : values, dims);
}

/** Timestep values as the graph takes them: int64 and int32 truncate toward zero, as numpy's cast does. */
export function timestepTensor(values: number[], type: TimestepType, dims: number[]): ort.Tensor {
  if (type === "int64") return tensor(type, BigInt64Array.from(values, (v) => BigInt(Math.trunc(v))), dims);
  if (type === "int32") return tensor(type, Int32Array.from(values, Math.trunc), dims);
  return floatTensor(Float32Array.from(values), type, dims);
}

export function idsTensor(rows: number[][], type: IdsType): ort.Tensor {
  const flat = rows.flat();
  const dims = [rows.length, rows[0]?.length ?? 0];
  return type === "int64" ? tensor(type, BigInt64Array.from(flat, (v) => BigInt(v)), dims) : tensor(type, Int32Array.from(flat), dims);
}

/** A float output as float32 values, whatever the graph's float type (float16 arrives as a 2-byte array). */
export function floatsOf(value: OrtValue): Float32Array {
  const data = value.data;
  if (data instanceof Float32Array) return data;
  const view = data as { buffer: ArrayBuffer; byteOffset: number; length: number; BYTES_PER_ELEMENT: number };
  if (value.type === "float16" && view.BYTES_PER_ELEMENT === 2) return halfToFloat(new Uint16Array(view.buffer, view.byteOffset, view.length));
  throw new Error(`expected a float output, got ${value.type}`);
}
